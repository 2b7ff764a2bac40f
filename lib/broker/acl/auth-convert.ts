import type { AclInfo, PolicyEntryInfo, UserInfo } from '../../../protocol/body/auth-bodies.js';
import {
  actionByName,
  decisionByName,
  parseResource,
  policyTypeByName,
  resourceKey,
  usernameOfSubject,
  userStatusByName,
  userTypeByName,
  validSourceIp,
  type Acl,
  type AuthAction,
  type AuthUser,
  type Policy,
  type PolicyEntry,
  type UserStatus,
  type UserType,
} from './auth-model.js';
import { AuthMetadataError } from './errors.js';

/**
 * UserInfo / AclInfo (the wire's JSON) to the model and back, with the checks of Java's
 * AuthenticationMetadataManagerImpl / AuthorizationMetadataManagerImpl and their messages.
 */

/** What an AUTH_CREATE_USER / AUTH_UPDATE_USER body asks for: what is absent is left as it is (update) or defaulted (create). */
export interface UserChange {
  username: string;
  password: string | undefined;
  userType: UserType | undefined;
  userStatus: UserStatus | undefined;
}

export function userChangeOf(info: UserInfo): UserChange {
  return {
    username: info.username,
    password: info.password,
    // Java's UserType.getByName / UserStatus.getByName: an unknown name is null, i.e. not given
    userType: userTypeByName(info.userType) ?? undefined,
    userStatus: userStatusByName(info.userStatus) ?? undefined,
  };
}

export function userInfoOf(u: AuthUser): UserInfo {
  return { username: u.username, password: u.password, userType: u.userType, userStatus: u.userStatus };
}

function entryOf(e: PolicyEntryInfo): PolicyEntry {
  const resource = parseResource(e.resource);
  if (resource === null) throw new AuthMetadataError('The resource is null.');
  // AclConverter drops an action name it does not know; none left is "The actions is empty."
  const actions = e.actions.map((a) => actionByName(a)).filter((a): a is AuthAction => a !== null);
  if (actions.length === 0) throw new AuthMetadataError('The actions is empty.');
  if (actions.includes('Any')) throw new AuthMetadataError('The actions can not be Any.');
  const sourceIps = e.sourceIps ?? [];
  for (const ip of sourceIps) {
    if (ip.trim() === '') throw new AuthMetadataError('The source ip is empty.');
    if (!validSourceIp(ip)) throw new AuthMetadataError('The source ip is invalid.');
  }
  const decision = decisionByName(e.decision);
  if (decision === null) throw new AuthMetadataError('The decision is null or illegal.');
  return { resource, actions, sourceIps: [...sourceIps], decision };
}

/**
 * An AclInfo checked and converted; `subject` (the header's) is used when the body names none.
 * Policies without a type are Custom; a policy without entries is left out, as AclConverter does.
 */
export function aclOf(info: AclInfo, subject: string | undefined): Acl {
  const key = info.subject !== '' ? info.subject : subject;
  if (usernameOfSubject(key) === null) throw new AuthMetadataError('The subject type is null.');
  const policies: Policy[] = [];
  for (const p of info.policies) {
    if (p.entries.length === 0) continue;
    policies.push({ policyType: policyTypeByName(p.policyType) ?? 'Custom', entries: p.entries.map(entryOf) });
  }
  if (policies.length === 0) throw new AuthMetadataError('The policies is empty.');
  return { subject: key!, policies };
}

export function aclInfoOf(acl: Acl): AclInfo {
  return {
    subject: acl.subject,
    policies: acl.policies.map((p) => ({
      policyType: p.policyType,
      entries: p.entries.map((e) => ({
        resource: resourceKey(e.resource),
        actions: [...e.actions],
        sourceIps: e.sourceIps.length > 0 ? [...e.sourceIps] : undefined,
        decision: e.decision,
      })),
    })),
  };
}
