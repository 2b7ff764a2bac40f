import * as path from 'node:path';
import { parseFastjsonBody } from '../../../protocol/json/fastjson-parse.js';
import { AclInfoListBody, UserInfoListBody } from '../../../protocol/body/auth-bodies.js';
import { loadConfigFile, writeFileAtomic, type StoreWarn } from '../atomic-file.js';
import { aclInfoOf, aclOf, userInfoOf, type UserChange } from './auth-convert.js';
import {
  parseResource,
  policyTypeByName,
  resourceKey,
  sameResource,
  userSubject,
  usernameOfSubject,
  type Acl,
  type AuthUser,
  type PolicyEntry,
} from './auth-model.js';
import { AuthMetadataError } from './errors.js';

/**
 * A broker's 5.x auth metadata: its users and their ACLs (Apache 5.3's
 * AuthenticationMetadataManagerImpl / AuthorizationMetadataManagerImpl over the Local metadata
 * providers, which keep them in RocksDB under <store>/config/users and /acls). Here both live in
 * one file, <store>/config/auth.json, replaced atomically on every change (a user's deletion
 * removes its ACL in the same write). Listing is in name order, as RocksDB iterates its keys.
 * Every refusal is an AuthMetadataError with Java's message.
 */
export class AuthStore {
  private readonly users = new Map<string, AuthUser>();
  private readonly acls = new Map<string, Acl>();
  readonly file: string;

  constructor(
    storeDir: string,
    private readonly warn: StoreWarn,
  ) {
    this.file = path.join(storeDir, 'config', 'auth.json');
  }

  /** Reads the file (or its .bak); ConfigFileError when neither can be read. */
  load(): void {
    const data = loadConfigFile(this.file, decodeAuthFile, this.warn);
    if (!data) return;
    for (const u of data.users) this.users.set(u.username, u);
    for (const a of data.acls) this.acls.set(a.subject, a);
  }

  /**
   * initAuthenticationUser / innerClientAuthenticationCredentials: a Super user created at start
   * when no user of that name exists (an existing one is left as it is, password included).
   */
  ensureSuperUser(username: string, password: string): void {
    if (this.users.has(username)) return;
    this.createUser({ username, password, userType: 'Super', userStatus: undefined });
  }

  getUser(username: string | undefined): AuthUser | null {
    if (username === undefined || username.trim() === '') throw new AuthMetadataError('username can not be blank');
    return this.users.get(username) ?? null;
  }

  /** The stored user, for the checker (no name check). */
  findUser(username: string): AuthUser | undefined {
    return this.users.get(username);
  }

  /** The stored ACL of a subject key, for the checker. */
  findAcl(subject: string): Acl | undefined {
    return this.acls.get(subject);
  }

  isSuperUser(username: string): boolean {
    return this.users.get(username)?.userType === 'Super';
  }

  listUsers(filter: string | undefined): AuthUser[] {
    const f = filter?.trim() ? filter : undefined;
    return sorted(this.users).filter((u) => f === undefined || u.username.includes(f));
  }

  createUser(c: UserChange): void {
    if (c.username.trim() === '') throw new AuthMetadataError('username can not be blank');
    if (c.password === undefined || c.password.trim() === '') throw new AuthMetadataError('password can not be blank');
    if (this.users.has(c.username)) throw new AuthMetadataError('The user is existed');
    this.users.set(c.username, {
      username: c.username,
      password: c.password,
      userType: c.userType ?? 'Normal',
      userStatus: c.userStatus ?? 'enable',
    });
    this.persist();
  }

  /** Changes what is given (a blank password is not given), as AuthenticationMetadataManagerImpl.updateUser. */
  updateUser(c: UserChange): void {
    if (c.username.trim() === '') throw new AuthMetadataError('username can not be blank');
    const old = this.users.get(c.username);
    if (!old) throw new AuthMetadataError('The user is not exist');
    const next: AuthUser = { ...old };
    if (c.password !== undefined && c.password.trim() !== '') next.password = c.password;
    if (c.userType !== undefined) next.userType = c.userType;
    if (c.userStatus !== undefined) next.userStatus = c.userStatus;
    this.users.set(c.username, next);
    this.persist();
  }

  /** The user and its ACL; nothing when there is no such user. */
  deleteUser(username: string): void {
    if (username.trim() === '') throw new AuthMetadataError('username can not be blank');
    const a = this.users.delete(username);
    const b = this.acls.delete(userSubject(username));
    if (a || b) this.persist();
  }

  private subjectUser(subject: string | undefined, missing: string): void {
    const name = usernameOfSubject(subject);
    if (name === null) throw new AuthMetadataError('The subject is null.');
    if (!this.users.has(name)) throw new AuthMetadataError(missing);
  }

  /**
   * AUTH_CREATE_ACL and AUTH_UPDATE_ACL (the same in Java): the subject's ACL created, or each
   * policy merged into the one of its type, an entry for the same resource replacing the old one.
   */
  putAcl(acl: Acl): void {
    this.subjectUser(acl.subject, `The subject of ${acl.subject} is not exist.`);
    const old = this.acls.get(acl.subject);
    if (!old) {
      this.acls.set(acl.subject, acl);
    } else {
      for (const p of acl.policies) {
        const into = old.policies.find((x) => x.policyType === p.policyType);
        if (!into) {
          old.policies.push(p);
          continue;
        }
        for (const e of p.entries) {
          const i = into.entries.findIndex((x) => sameResource(x.resource, e.resource));
          if (i < 0) into.entries.push(e);
          else into.entries[i] = e;
        }
      }
    }
    this.persist();
  }

  /** The whole ACL, or (`resource` given) the entry of that resource in the policy of `policyType` (Custom when absent). */
  deleteAcl(subject: string | undefined, policyType: string | undefined, resource: string | undefined): void {
    this.subjectUser(subject, 'The subject is not exist.');
    const acl = this.acls.get(subject!);
    if (!acl) throw new AuthMetadataError('The acl is not exist.');
    if (resource !== undefined && resource.trim() !== '') {
      // Java's Resource.of answers null for a key it cannot read and then deletes the whole ACL
      const r = parseResource(resource);
      if (r === null) throw new AuthMetadataError(`The resource ${resource} is invalid.`);
      const type = policyTypeByName(policyType) ?? 'Custom';
      const p = acl.policies.find((x) => x.policyType === type);
      if (p) {
        p.entries = p.entries.filter((e) => !sameResource(e.resource, r));
        if (p.entries.length === 0) acl.policies = acl.policies.filter((x) => x !== p);
      }
      if (acl.policies.length > 0) {
        this.persist();
        return;
      }
    }
    this.acls.delete(subject!);
    this.persist();
  }

  getAcl(subject: string | undefined): Acl | null {
    this.subjectUser(subject, 'The subject is not exist.');
    return this.acls.get(subject!) ?? null;
  }

  /**
   * LocalAuthorizationMetadataProvider.listAcl: the ACLs whose subject key contains
   * `subjectFilter`; with `resourceFilter`, an ACL whose subject key does not contain it keeps only
   * the entries whose resource does (Java's rule, the subject test included), and one left without
   * entries is not listed.
   */
  listAcls(subjectFilter: string | undefined, resourceFilter: string | undefined): Acl[] {
    const sf = subjectFilter?.trim() ? subjectFilter : undefined;
    const rf = resourceFilter?.trim() ? resourceFilter : undefined;
    const out: Acl[] = [];
    for (const acl of sorted(this.acls)) {
      if (sf !== undefined && !acl.subject.includes(sf)) continue;
      const keep = (e: PolicyEntry): boolean =>
        rf === undefined || acl.subject.includes(rf) || resourceKey(e.resource).includes(rf);
      const policies = acl.policies
        .map((p) => ({ policyType: p.policyType, entries: p.entries.filter(keep) }))
        .filter((p) => p.entries.length > 0);
      if (policies.length > 0) out.push({ subject: acl.subject, policies });
    }
    return out;
  }

  private persist(): void {
    const users = UserInfoListBody.encode(sorted(this.users).map(userInfoOf)).toString('utf8');
    const acls = AclInfoListBody.encode(sorted(this.acls).map(aclInfoOf)).toString('utf8');
    writeFileAtomic(this.file, `{"acls":${acls},"users":${users}}\n`, true, true);
  }
}

function sorted<T>(m: Map<string, T>): T[] {
  return [...m.keys()].sort().map((k) => m.get(k)!);
}

function decodeAuthFile(text: string): { users: AuthUser[]; acls: Acl[] } {
  const o = parseFastjsonBody(Buffer.from(text, 'utf8')) as { users?: unknown; acls?: unknown };
  const part = (v: unknown): Buffer => Buffer.from(JSON.stringify(v ?? []), 'utf8');
  const users = UserInfoListBody.decode(part(o.users)).map((u): AuthUser => {
    if (!u.username || !u.password) throw new AuthMetadataError('a user without username or password');
    return {
      username: u.username,
      password: u.password,
      userType: u.userType === 'Super' ? 'Super' : 'Normal',
      userStatus: u.userStatus === 'disable' ? 'disable' : 'enable',
    };
  });
  const acls = AclInfoListBody.decode(part(o.acls)).map((a) => aclOf(a, undefined));
  return { users, acls };
}
