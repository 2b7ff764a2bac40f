import net from 'node:net';

/**
 * The model of 5.x auth (ACL 2.0, RIP-66; Apache's auth module, 5.3.3): users, and per subject
 * an ACL of policies whose entries allow or deny actions on resources, optionally from some
 * source IPs. Names are Java's enum names; parsing them ignores case, as Java's getByName does.
 */

/** What a policy entry grants (Java's Action; `Any` only appears in what a request needs). */
export type AuthAction = 'All' | 'Any' | 'Pub' | 'Sub' | 'Create' | 'Update' | 'Delete' | 'Get' | 'List';
const ACTIONS: readonly AuthAction[] = ['All', 'Any', 'Pub', 'Sub', 'Create', 'Update', 'Delete', 'Get', 'List'];

export type ResourceType = 'Any' | 'Cluster' | 'Namespace' | 'Topic' | 'Group';
const RESOURCE_TYPES: readonly ResourceType[] = ['Any', 'Cluster', 'Namespace', 'Topic', 'Group'];

/** LITERAL: the name itself; PREFIXED (`Topic:order*`): names starting with it; ANY (`Topic:*`): every name. */
export type ResourcePattern = 'ANY' | 'LITERAL' | 'PREFIXED';

export type Decision = 'Allow' | 'Deny';
export type PolicyType = 'Custom' | 'Default';
export type UserType = 'Super' | 'Normal';
export type UserStatus = 'enable' | 'disable';

export interface AuthResource {
  type: ResourceType;
  /** null for the ANY pattern. */
  name: string | null;
  pattern: ResourcePattern;
}

export interface PolicyEntry {
  resource: AuthResource;
  actions: AuthAction[];
  /** IPs or CIDR blocks the entry applies to; empty: every source. */
  sourceIps: string[];
  decision: Decision;
}

export interface Policy {
  policyType: PolicyType;
  entries: PolicyEntry[];
}

/** A subject's ACL; `subject` is the subject key, "User:alice". */
export interface Acl {
  subject: string;
  policies: Policy[];
}

export interface AuthUser {
  username: string;
  password: string;
  userType: UserType;
  userStatus: UserStatus;
}

function byName<T extends string>(names: readonly T[], name: string | undefined | null): T | null {
  if (name == null) return null;
  const lower = name.toLowerCase();
  return names.find((n) => n.toLowerCase() === lower) ?? null;
}

export const actionByName = (n: string | undefined | null): AuthAction | null => byName(ACTIONS, n);
export const decisionByName = (n: string | undefined | null): Decision | null => byName(['Allow', 'Deny'], n);
export const policyTypeByName = (n: string | undefined | null): PolicyType | null => byName(['Custom', 'Default'], n);
export const userTypeByName = (n: string | undefined | null): UserType | null => byName(['Super', 'Normal'], n);
export const userStatusByName = (n: string | undefined | null): UserStatus | null => byName(['enable', 'disable'], n);

/** The key of a user subject ("User:alice"). */
export function userSubject(username: string): string {
  return `User:${username}`;
}

/** The username of a subject key, or null when it is no user subject (User is 5.3's only subject type). */
export function usernameOfSubject(subject: string | undefined | null): string | null {
  if (subject == null) return null;
  const colon = subject.indexOf(':');
  const type = colon < 0 ? subject : subject.slice(0, colon);
  if (type.toLowerCase() !== 'user') return null;
  return colon < 0 ? '' : subject.slice(colon + 1);
}

/**
 * Resource.of: `*` (any resource of any type), `Type:*` (any of a type), `Type:prefix*`
 * (PREFIXED), `Type:name` (LITERAL); null when blank or the type is unknown.
 */
export function parseResource(key: string | undefined | null): AuthResource | null {
  if (key == null || key.trim() === '') return null;
  if (key === '*') return { type: 'Any', name: null, pattern: 'ANY' };
  const colon = key.indexOf(':');
  const type = byName(RESOURCE_TYPES, colon < 0 ? key : key.slice(0, colon));
  if (type === null) return null;
  const name = colon < 0 ? '' : key.slice(colon + 1);
  if (name === '*') return { type, name: null, pattern: 'ANY' };
  if (name.endsWith('*')) return { type, name: name.slice(0, name.indexOf('*')), pattern: 'PREFIXED' };
  return { type, name, pattern: 'LITERAL' };
}

/** Resource.getResourceKey: the text form parseResource reads back. */
export function resourceKey(r: AuthResource): string {
  if (r.type === 'Any') return '*';
  if (r.pattern === 'ANY') return `${r.type}:*`;
  return `${r.type}:${r.name ?? ''}${r.pattern === 'PREFIXED' ? '*' : ''}`;
}

export function sameResource(a: AuthResource, b: AuthResource): boolean {
  return a.type === b.type && a.name === b.name && a.pattern === b.pattern;
}

/** Resource.isMatch: does the entry's resource cover the literal resource a request needs? */
export function resourceMatches(entry: AuthResource, needed: AuthResource): boolean {
  if (entry.type === 'Any') return true;
  if (entry.type !== needed.type) return false;
  if (entry.pattern === 'ANY') return true;
  if (entry.pattern === 'LITERAL') return needed.name === entry.name;
  return needed.name?.startsWith(entry.name ?? '') === true;
}

/** PolicyEntry.isMatchAction: one of the needed actions granted (All grants every one); a need of Any is met by any entry with actions. */
export function actionsMatch(granted: readonly AuthAction[], needed: readonly AuthAction[]): boolean {
  if (granted.length === 0) return false;
  if (needed.includes('Any')) return true;
  return needed.some((a) => granted.includes(a) || granted.includes('All'));
}

/** IPAddressUtils.isValidIPOrCidr: an IPv4 or IPv6 address, or one with a /prefix in range. */
export function validSourceIp(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return net.isIP(s) !== 0;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  const family = net.isIP(ip);
  if (family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** Environment.isMatch: no source IPs matches every source; else the IP equals one, or lies in one's CIDR block. */
export function sourceIpMatches(sourceIps: readonly string[], ip: string): boolean {
  if (sourceIps.length === 0) return true;
  for (const s of sourceIps) {
    const slash = s.indexOf('/');
    if (slash < 0) {
      if (s === ip) return true;
      continue;
    }
    const family = net.isIP(ip);
    const base = s.slice(0, slash);
    if (family === 0 || net.isIP(base) !== family) continue;
    const list = new net.BlockList();
    const type = family === 4 ? 'ipv4' : 'ipv6';
    list.addSubnet(base, Number(s.slice(slash + 1)), type);
    if (list.check(ip, type)) return true;
  }
  return false;
}

/**
 * How specific an entry's resource is, most specific first (AclAuthorizationHandler's order as
 * fixed after 5.3.3): any resource type after a typed one; LITERAL before PREFIXED before ANY; a
 * longer prefix before a shorter one; then Deny before Allow.
 */
export function compareEntries(a: PolicyEntry, b: PolicyEntry): number {
  const ra = a.resource;
  const rb = b.resource;
  if ((ra.type === 'Any') !== (rb.type === 'Any')) return ra.type === 'Any' ? 1 : -1;
  if (ra.pattern !== rb.pattern) {
    const rank = { LITERAL: 0, PREFIXED: 1, ANY: 2 } as const;
    return rank[ra.pattern] - rank[rb.pattern];
  }
  if (ra.pattern === 'PREFIXED') {
    const d = (rb.name ?? '').length - (ra.name ?? '').length;
    if (d !== 0) return d;
  }
  if (a.decision !== b.decision) return a.decision === 'Deny' ? -1 : 1;
  return 0;
}

/**
 * The entry that decides a request (AclAuthorizationHandler.matchPolicyEntries): the entries of
 * the Custom policy that match the resource, one of the actions and the source IP, else those of
 * the Default policy; the most specific of them (compareEntries). null: no entry matches.
 */
export function matchPolicyEntry(
  acl: Acl,
  needed: AuthResource,
  actions: readonly AuthAction[],
  sourceIp: string,
): PolicyEntry | null {
  for (const type of ['Custom', 'Default'] as const) {
    const policy = acl.policies.find((p) => p.policyType === type);
    if (!policy) continue;
    const matched = policy.entries.filter(
      (e) =>
        resourceMatches(e.resource, needed) &&
        actionsMatch(e.actions, actions) &&
        sourceIpMatches(e.sourceIps, sourceIp),
    );
    if (matched.length > 0) return matched.sort(compareEntries)[0]!;
  }
  return null;
}
