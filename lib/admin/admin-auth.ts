import {
  Operations,
  type AclInfo,
  type ClusterInfo,
  type Operation,
  type OperationRequest,
  type OperationRequestBody,
  type PolicyEntryInfo,
  type UserInfo,
} from '../../protocol/internal.js';
import type { Reply } from '../client/index.js';
import { withoutNamespace, wrapNamespace } from '../client/index.js';
import type { AdminTarget } from './admin-ops-types.js';
import { AdminArgumentError, UnknownClusterError } from './errors.js';

/** What the auth commands need of their AdminClient. */
export interface AdminAuthHost {
  call<O extends Operation>(
    addr: string,
    op: O,
    header: OperationRequest<O>,
    body?: OperationRequestBody<O>,
  ): Promise<Reply<O>>;
  clusterInfo(): Promise<ClusterInfo>;
  masterAddrs(clusterName?: string): Promise<Array<{ brokerName: string; addr: string }>>;
  /** The AdminClient's namespace: Topic: and Group: resource names are the application's. */
  namespace: string | undefined;
}

/** A user to create (`userType` Normal when not given). */
export interface NewUser {
  username: string;
  password: string;
  userType?: 'Super' | 'Normal';
}

/** What `updateUser` changes: what is not given is left as it is. */
export interface UserUpdate {
  username: string;
  password?: string;
  userType?: 'Super' | 'Normal';
  userStatus?: 'enable' | 'disable';
}

/**
 * One ACL statement as mqadmin createAcl takes it: `decision` on `actions` over each resource
 * (one entry each), from `sourceIps` (any source when none).
 */
export interface AclGrant {
  /** "User:alice" (a bare "alice" is taken as the user alice). */
  subject: string;
  /** `Topic:T`, `Group:G`, `Cluster:C`, a prefix `Topic:order*`, every topic `Topic:*`, or everything `*`. */
  resources: string[];
  /** Pub, Sub, Create, Update, Delete, Get, List, All (any case). */
  actions: string[];
  /** IPs or CIDR blocks. */
  sourceIps?: string[];
  decision: 'Allow' | 'Deny';
}

const ACTIONS = ['All', 'Pub', 'Sub', 'Create', 'Update', 'Delete', 'Get', 'List'];
const RESOURCE = /^(\*|(Any|Cluster|Namespace|Topic|Group):.+)$/i;

function subjectOf(s: string): string {
  if (!s || s.trim() === '') throw new AdminArgumentError('subject', 'is empty');
  if (!s.includes(':')) return `User:${s}`;
  if (!/^user:./i.test(s)) throw new AdminArgumentError('subject', `${JSON.stringify(s)} is not User:<name>`);
  return s;
}

function checkGrant(g: AclGrant): void {
  if (g.resources.length === 0) throw new AdminArgumentError('resources', 'names no resource');
  for (const r of g.resources)
    if (!RESOURCE.test(r))
      throw new AdminArgumentError(
        'resources',
        `${JSON.stringify(r)} is not Topic:T, Group:G, Cluster:C, Type:prefix*, Type:* or *`,
      );
  if (g.actions.length === 0) throw new AdminArgumentError('actions', 'names no action');
  for (const a of g.actions)
    if (!ACTIONS.some((x) => x.toLowerCase() === a.toLowerCase()))
      throw new AdminArgumentError('actions', `${JSON.stringify(a)} is none of ${ACTIONS.join(', ')}`);
  if (!/^(allow|deny)$/i.test(g.decision))
    throw new AdminArgumentError('decision', `${JSON.stringify(g.decision)} is not Allow or Deny`);
}

/** `Topic:Orders` as `Topic:NS%Orders` (and `Topic:*` as the namespace's prefix `Topic:NS%*`); other resources as they are. */
function wrapResource(ns: string | undefined, key: string): string {
  const m = /^(topic|group):(.*)$/i.exec(key);
  if (!ns || !m) return key;
  return `${m[1]}:${m[2] === '*' ? `${ns}%*` : wrapNamespace(ns, m[2]!)}`;
}
function unwrapResource(ns: string | undefined, key: string): string {
  const m = /^(topic|group):(.*)$/i.exec(key);
  if (!ns || !m) return key;
  return `${m[1]}:${m[2] === `${ns}%*` ? '*' : withoutNamespace(ns, m[2]!)}`;
}

/**
 * The AdminClient's 5.x auth commands (DefaultMQAdminExt createUser … listAcl): writes go to one
 * broker, or every broker (masters and slaves) of a cluster or of every cluster, as mqadmin's -c;
 * reads ask the masters in name order and answer the first that has something.
 */
export class AdminAuth {
  constructor(private readonly host: AdminAuthHost) {}

  /** mqadmin -b / -c for writes: CommandUtil.fetchMasterAndSlaveAddrByClusterName. */
  private async writeAddrs(t: AdminTarget): Promise<string[]> {
    if (t.brokerAddr !== undefined) return [t.brokerAddr];
    const info = await this.host.clusterInfo();
    const names =
      t.clusterName === undefined ? Object.keys(info.brokerAddrTable) : info.clusterAddrTable[t.clusterName];
    if (names === undefined) throw new UnknownClusterError(t.clusterName ?? '');
    const out: string[] = [];
    for (const n of [...names].sort()) {
      const addrs = info.brokerAddrTable[n]?.brokerAddrs ?? {};
      for (const id of Object.keys(addrs).sort((a, b) => Number(a) - Number(b))) out.push(addrs[id]!);
    }
    return out;
  }

  private async readAddrs(t: AdminTarget): Promise<string[]> {
    if (t.brokerAddr !== undefined) return [t.brokerAddr];
    return (await this.host.masterAddrs(t.clusterName)).map((m) => m.addr);
  }

  private async each(t: AdminTarget, f: (addr: string) => Promise<unknown>): Promise<string[]> {
    const addrs = await this.writeAddrs(t);
    for (const a of addrs) await f(a);
    return addrs;
  }

  private async first<T>(t: AdminTarget, f: (addr: string) => Promise<T | null>): Promise<T | null> {
    for (const a of await this.readAddrs(t)) {
      const r = await f(a);
      if (r !== null) return r;
    }
    return null;
  }

  async createUser(u: NewUser, t: AdminTarget): Promise<string[]> {
    if (!u.username) throw new AdminArgumentError('username', 'is empty');
    if (!u.password) throw new AdminArgumentError('password', 'is empty');
    const body: UserInfo = { username: u.username, password: u.password, userType: u.userType };
    return this.each(t, (a) => this.host.call(a, Operations.AUTH_CREATE_USER, { username: u.username }, body));
  }

  async updateUser(u: UserUpdate, t: AdminTarget): Promise<string[]> {
    if (!u.username) throw new AdminArgumentError('username', 'is empty');
    if (u.password === undefined && u.userType === undefined && u.userStatus === undefined)
      throw new AdminArgumentError('password', 'nothing to update: give password, userType or userStatus');
    const body: UserInfo = {
      username: u.username,
      password: u.password,
      userType: u.userType,
      userStatus: u.userStatus,
    };
    return this.each(t, (a) => this.host.call(a, Operations.AUTH_UPDATE_USER, { username: u.username }, body));
  }

  async deleteUser(username: string, t: AdminTarget): Promise<string[]> {
    if (!username) throw new AdminArgumentError('username', 'is empty');
    return this.each(t, (a) => this.host.call(a, Operations.AUTH_DELETE_USER, { username }));
  }

  async getUser(username: string, t: AdminTarget): Promise<UserInfo | null> {
    if (!username) throw new AdminArgumentError('username', 'is empty');
    return this.first(t, async (a) => (await this.host.call(a, Operations.AUTH_GET_USER, { username })).body ?? null);
  }

  async listUser(filter: string | undefined, t: AdminTarget): Promise<UserInfo[]> {
    const r = await this.first(t, async (a) => {
      const list = (await this.host.call(a, Operations.AUTH_LIST_USER, { filter })).body ?? [];
      return list.length > 0 ? list : null;
    });
    return r ?? [];
  }

  private aclBody(g: AclGrant): { subject: string; body: AclInfo } {
    checkGrant(g);
    const subject = subjectOf(g.subject);
    const ns = this.host.namespace;
    const entries: PolicyEntryInfo[] = g.resources.map((r) => ({
      resource: wrapResource(ns, r),
      actions: g.actions,
      sourceIps: g.sourceIps && g.sourceIps.length > 0 ? g.sourceIps : undefined,
      decision: g.decision,
    }));
    return { subject, body: { subject, policies: [{ entries }] } };
  }

  async createAcl(g: AclGrant, t: AdminTarget): Promise<string[]> {
    const { subject, body } = this.aclBody(g);
    return this.each(t, (a) => this.host.call(a, Operations.AUTH_CREATE_ACL, { subject }, body));
  }

  async updateAcl(g: AclGrant, t: AdminTarget): Promise<string[]> {
    const { subject, body } = this.aclBody(g);
    return this.each(t, (a) => this.host.call(a, Operations.AUTH_UPDATE_ACL, { subject }, body));
  }

  async deleteAcl(subject: string, resource: string | undefined, t: AdminTarget): Promise<string[]> {
    const s = subjectOf(subject);
    if (resource !== undefined && !RESOURCE.test(resource))
      throw new AdminArgumentError('resource', `${JSON.stringify(resource)} is not a resource`);
    const header = {
      subject: s,
      resource: resource === undefined ? undefined : wrapResource(this.host.namespace, resource),
    };
    return this.each(t, (a) => this.host.call(a, Operations.AUTH_DELETE_ACL, header));
  }

  async getAcl(subject: string, t: AdminTarget): Promise<AclInfo | null> {
    const s = subjectOf(subject);
    const acl = await this.first(
      t,
      async (a) => (await this.host.call(a, Operations.AUTH_GET_ACL, { subject: s })).body ?? null,
    );
    return acl && this.unwrap(acl);
  }

  async listAcl(filter: { subject?: string; resource?: string }, t: AdminTarget): Promise<AclInfo[]> {
    const header = {
      subjectFilter: filter.subject,
      resourceFilter: filter.resource === undefined ? undefined : wrapResource(this.host.namespace, filter.resource),
    };
    const r = await this.first(t, async (a) => {
      const list = (await this.host.call(a, Operations.AUTH_LIST_ACL, header)).body ?? [];
      return list.length > 0 ? list : null;
    });
    return (r ?? []).map((acl) => this.unwrap(acl));
  }

  private unwrap(acl: AclInfo): AclInfo {
    const ns = this.host.namespace;
    if (!ns) return acl;
    for (const p of acl.policies) for (const e of p.entries) e.resource = unwrapResource(ns, e.resource);
    return acl;
  }
}
