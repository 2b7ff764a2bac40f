import { toJavaJson } from '../json/java-json.js';
import { parseFastjsonBody } from '../json/fastjson-parse.js';
import { asArray, asObject, optString, stringArray, type Obj } from './shape.js';

/**
 * Bodies of the 5.x auth management requests (Java's remoting/protocol/body UserInfo and AclInfo,
 * 5.3.3), written by fastjson with keys sorted and null fields left out. The names of types,
 * statuses, decisions and actions are Java's enum names ("Super", "enable", "Allow", "Pub");
 * the broker reads them ignoring case.
 */

/**
 * A user (UserInfo): `username`, `password` (the HmacSHA1 key the user signs with; the broker
 * answers it in clear, as Java does), `userType` ("Super" | "Normal"), `userStatus` ("enable" | "disable").
 */
export interface UserInfo {
  username: string;
  password?: string | undefined;
  userType?: string | undefined;
  userStatus?: string | undefined;
}

/** One entry of a policy (AclInfo.PolicyEntryInfo): a resource, its actions, the source IPs (none: any) and Allow or Deny. */
export interface PolicyEntryInfo {
  /** `Topic:T`, `Group:G`, `Cluster:C`, a `*`-suffixed prefix (`Topic:order*`), `Topic:*`, or `*`. */
  resource: string;
  actions: string[];
  sourceIps?: string[] | undefined;
  decision: string;
}

/** A policy (AclInfo.PolicyInfo): "Custom" (what users write) or "Default", and its entries. */
export interface PolicyInfo {
  policyType?: string | undefined;
  entries: PolicyEntryInfo[];
}

/** A subject's ACL (AclInfo): `subject` is "User:alice". */
export interface AclInfo {
  subject: string;
  policies: PolicyInfo[];
}

function userObj(u: UserInfo): Obj {
  return { username: u.username, password: u.password, userType: u.userType, userStatus: u.userStatus };
}
function readUser(v: unknown, path: string): UserInfo {
  const o = asObject(v, path);
  const u: UserInfo = { username: optString(o, 'username', path) ?? '' };
  const password = optString(o, 'password', path);
  const userType = optString(o, 'userType', path);
  const userStatus = optString(o, 'userStatus', path);
  if (password !== undefined) u.password = password;
  if (userType !== undefined) u.userType = userType;
  if (userStatus !== undefined) u.userStatus = userStatus;
  return u;
}

function aclObj(a: AclInfo): Obj {
  return {
    subject: a.subject,
    policies: a.policies.map((p) => ({
      policyType: p.policyType,
      entries: p.entries.map((e) => ({
        resource: e.resource,
        actions: e.actions,
        sourceIps: e.sourceIps && e.sourceIps.length > 0 ? e.sourceIps : undefined,
        decision: e.decision,
      })),
    })),
  };
}
function readAcl(v: unknown, path: string): AclInfo {
  const o = asObject(v, path);
  return {
    subject: optString(o, 'subject', path) ?? '',
    policies: asArray(o.policies, `${path}.policies`).map((pv, i): PolicyInfo => {
      const pp = `${path}.policies[${i}]`;
      const p = asObject(pv, pp);
      const policy: PolicyInfo = {
        entries: asArray(p.entries, `${pp}.entries`).map((ev, j): PolicyEntryInfo => {
          const ep = `${pp}.entries[${j}]`;
          const e = asObject(ev, ep);
          const entry: PolicyEntryInfo = {
            resource: optString(e, 'resource', ep) ?? '',
            actions: stringArray(e.actions, `${ep}.actions`),
            decision: optString(e, 'decision', ep) ?? '',
          };
          if (e.sourceIps != null) entry.sourceIps = stringArray(e.sourceIps, `${ep}.sourceIps`);
          return entry;
        }),
      };
      const policyType = optString(p, 'policyType', pp);
      if (policyType !== undefined) policy.policyType = policyType;
      return policy;
    }),
  };
}

const json = (v: unknown): Buffer => Buffer.from(toJavaJson(v), 'utf8');

/** AUTH_CREATE_USER / AUTH_UPDATE_USER request body and AUTH_GET_USER response body. */
export const UserInfoBody = {
  encode: (u: UserInfo): Buffer => json(userObj(u)),
  decode: (b: Buffer | Uint8Array): UserInfo => readUser(parseFastjsonBody(b), 'UserInfo'),
} as const;

/** AUTH_LIST_USER response body: a JSON array of UserInfo (no body when there is none). */
export const UserInfoListBody = {
  encode: (us: readonly UserInfo[]): Buffer => json(us.map(userObj)),
  decode: (b: Buffer | Uint8Array): UserInfo[] =>
    asArray(parseFastjsonBody(b), 'UserInfo[]').map((v, i) => readUser(v, `UserInfo[${i}]`)),
} as const;

/** AUTH_CREATE_ACL / AUTH_UPDATE_ACL request body and AUTH_GET_ACL response body. */
export const AclInfoBody = {
  encode: (a: AclInfo): Buffer => json(aclObj(a)),
  decode: (b: Buffer | Uint8Array): AclInfo => readAcl(parseFastjsonBody(b), 'AclInfo'),
} as const;

/** AUTH_LIST_ACL response body: a JSON array of AclInfo (no body when there is none). */
export const AclInfoListBody = {
  encode: (as: readonly AclInfo[]): Buffer => json(as.map(aclObj)),
  decode: (b: Buffer | Uint8Array): AclInfo[] =>
    asArray(parseFastjsonBody(b), 'AclInfo[]').map((v, i) => readAcl(v, `AclInfo[${i}]`)),
} as const;
