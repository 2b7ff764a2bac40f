export { Permission, parsePermission, permissionText, permits, type PermissionBits } from './permission.js';
export {
  ADMIN_CODES,
  TRACE_TOPIC,
  requestAccess,
  RequestAccessParseError,
  type RequestAccess,
  type ResourceNeed,
} from './request-access.js';
export {
  parseAddressPattern,
  hostOfRemoteAddress,
  expandIPv6,
  AddressPatternError,
  type AddressPattern,
} from './remote-address.js';
export { parseYamlSubset, YamlSubsetError, type YamlValue } from './yaml-subset.js';
export {
  AclConfigError,
  ACL_KEY_MIN_LENGTH,
  compileAclConfig,
  loadAclOption,
  readAclFile,
  type AclAccount,
  type AclConfig,
  type PlainAccount,
  type PlainAclData,
} from './plain-acl-config.js';
export {
  PlainAclChecker,
  aclRequestGate,
  type AclGateOptions,
  type Allowed,
  type ChannelInfo,
  type CheckScope,
  type Decision,
  type PermissionChecker,
  type Refused,
} from './permission-checker.js';
