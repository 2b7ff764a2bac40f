export {
  AclConfigError,
  AddressPatternError,
  AuthMetadataError,
  RequestAccessParseError,
  YamlSubsetError,
} from './errors.js';
export { Permission, parsePermission, permissionText, permits, type PermissionBits } from './permission.js';
export {
  ADMIN_CODES,
  TRACE_TOPIC,
  requestAccess,
  type RequestAccess,
  type ResourceNeed,
} from './request-access.js';
export {
  parseAddressPattern,
  hostOfRemoteAddress,
  expandIPv6,
  type AddressPattern,
} from './remote-address.js';
export { parseYamlSubset, type YamlValue } from './yaml-subset.js';
export {
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
export { AuthChecker, authNeeds, type AuthCheckSettings, type AuthNeed } from './auth-checker.js';
export { AuthStore } from './auth-store.js';
export { setUpBrokerAuth, type BrokerAuth, type BrokerAuthOptions } from './auth-setup.js';
export * from './auth-model.js';
