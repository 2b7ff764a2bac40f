import type { AclInfo, UserInfo } from '../../../protocol/body/auth-bodies.js';
import { UsageError, type OptionValues } from '../common.js';
import { targetOf } from './broker.js';
import { need, type AdminCommandGroup, type AdminOutput, type AdminSubcommand } from './shared.js';

/**
 * `rocketwire admin auth user|acl create|update|delete|get|list`: mqadmin's createUser … listAcl
 * (5.x auth, ACL 2.0), printing what mqadmin prints (its printf formats, Java's list and null
 * spellings included), or JSON with --json.
 */

const USER_FORMAT = [16, 22, 22, 22];
const ACL_FORMAT = [16, 10, 22, 20, 24, 10];

/** Java's printf of "%-Ns  %-Ms…%n": every column padded, the last one too. */
function javaRow(widths: number[], cells: string[]): string {
  return cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
}

/** What String.valueOf prints for a Java List (or null). */
function javaList(v: readonly string[] | undefined): string {
  return v === undefined ? 'null' : `[${v.join(', ')}]`;
}

function printUsers(out: AdminOutput, users: UserInfo[]): void {
  out.line(javaRow(USER_FORMAT, ['#UserName', '#Password', '#UserType', '#UserStatus']));
  for (const u of users)
    out.line(javaRow(USER_FORMAT, [u.username, u.password ?? 'null', u.userType ?? 'null', u.userStatus ?? 'null']));
}

function printAcls(out: AdminOutput, acls: AclInfo[]): void {
  out.line(javaRow(ACL_FORMAT, ['#Subject', '#PolicyType', '#Resource', '#Actions', '#SourceIp', '#Decision']));
  for (const a of acls) {
    if (a.policies.length === 0) out.line(javaRow(ACL_FORMAT, [a.subject, '', '', '', '', '']));
    for (const p of a.policies)
      for (const e of p.entries)
        out.line(
          javaRow(ACL_FORMAT, [
            a.subject,
            p.policyType ?? 'null',
            e.resource,
            javaList(e.actions),
            javaList(e.sourceIps),
            e.decision,
          ]),
        );
  }
}

const list = (v: OptionValues, name: string): string[] | undefined => {
  const s = v[name];
  if (typeof s !== 'string') return undefined;
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
};
const str = (v: OptionValues, name: string): string | undefined =>
  typeof v[name] === 'string' ? (v[name] as string) : undefined;

function written(out: AdminOutput, what: string, addrs: string[]): void {
  out.emit({ brokers: addrs }, () => {
    for (const a of addrs) out.line(`${what} to ${a} success.`);
  });
}

const ACTIONS = 'create, update, delete, get, list';
const TARGET = [
  '  --broker ADDR    only the broker at host:port',
  '  --cluster C      every broker of cluster C: writes go to masters and slaves, reads ask the',
  '                   masters (default: every cluster)',
].join('\n');

function userType(v: OptionValues): 'Super' | 'Normal' | undefined {
  const t = str(v, 'user-type');
  if (t === undefined) return undefined;
  if (/^super$/i.test(t)) return 'Super';
  if (/^normal$/i.test(t)) return 'Normal';
  throw new UsageError(`--user-type must be Super or Normal, got "${t}"`);
}

function userStatus(v: OptionValues): 'enable' | 'disable' | undefined {
  const t = str(v, 'user-status');
  if (t === undefined) return undefined;
  if (/^(enable|disable)$/i.test(t)) return t.toLowerCase() as 'enable' | 'disable';
  throw new UsageError(`--user-status must be enable or disable, got "${t}"`);
}

const user: AdminSubcommand = {
  name: 'user',
  summary: `5.x auth users: ${ACTIONS} (mqadmin createUser, updateUser, deleteUser, getUser, listUser)`,
  positional: 'action',
  options: {
    action: { type: 'string' },
    username: { type: 'string' },
    password: { type: 'string' },
    'user-type': { type: 'string' },
    'user-status': { type: 'string' },
    filter: { type: 'string' },
    broker: { type: 'string' },
    cluster: { type: 'string' },
  },
  help: [
    `  ACTION           ${ACTIONS}`,
    '  --username U     the user (create, update, delete, get)',
    '  --password P     its password, the secret key it signs with (create; update)',
    '  --user-type T    Super or Normal (create: Normal by default; update)',
    '  --user-status S  enable or disable (update)',
    '  --filter F       list: users whose name contains F',
    TARGET,
  ].join('\n'),
  async run(admin, v, out) {
    const target = targetOf(v);
    switch (need(v, 'action')) {
      case 'create': {
        const username = need(v, 'username');
        const password = need(v, 'password');
        const t = userType(v);
        written(
          out,
          'create user',
          await admin.createUser({ username, password, ...(t ? { userType: t } : {}) }, target),
        );
        return;
      }
      case 'update': {
        const u = {
          username: need(v, 'username'),
          password: str(v, 'password'),
          userType: userType(v),
          userStatus: userStatus(v),
        };
        const change = Object.fromEntries(Object.entries(u).filter(([, x]) => x !== undefined)) as typeof u;
        written(out, 'update user', await admin.updateUser(change, target));
        return;
      }
      case 'delete':
        written(out, 'delete user', await admin.deleteUser(need(v, 'username'), target));
        return;
      case 'get': {
        const u = await admin.getUser(need(v, 'username'), target);
        out.emit(u, () => {
          if (u) printUsers(out, [u]);
        });
        return;
      }
      case 'list': {
        const users = await admin.listUser(str(v, 'filter'), target);
        out.emit(users, () => {
          if (users.length === 0) return;
          printUsers(out, users);
        });
        return;
      }
      default:
        throw new UsageError(`admin auth user: the action is one of ${ACTIONS}, got "${v.action}"`);
    }
  },
};

const acl: AdminSubcommand = {
  name: 'acl',
  summary: `5.x auth ACLs: ${ACTIONS} (mqadmin createAcl, updateAcl, deleteAcl, getAcl, listAcl)`,
  positional: 'action',
  options: {
    action: { type: 'string' },
    subject: { type: 'string' },
    resources: { type: 'string' },
    resource: { type: 'string' },
    actions: { type: 'string' },
    'source-ips': { type: 'string' },
    decision: { type: 'string' },
    broker: { type: 'string' },
    cluster: { type: 'string' },
  },
  help: [
    `  ACTION           ${ACTIONS}`,
    '  --subject S      User:NAME (create, update, delete, get; list: subjects containing S)',
    '  --resources R,.. Topic:T, Group:G, Cluster:C, Topic:prefix*, Topic:*, * (create, update)',
    '  --actions A,..   Pub, Sub, Create, Update, Delete, Get, List, All (create, update)',
    '  --source-ips I,.. IPs or CIDR blocks the entries apply to (create, update; default any)',
    '  --decision D     Allow or Deny (create, update)',
    '  --resource R     delete: only this entry (default the whole ACL); list: entries containing R',
    TARGET,
  ].join('\n'),
  async run(admin, v, out) {
    const target = targetOf(v);
    const action = need(v, 'action');
    switch (action) {
      case 'create':
      case 'update': {
        const decision = need(v, 'decision');
        if (!/^(allow|deny)$/i.test(decision))
          throw new UsageError(`--decision must be Allow or Deny, got "${decision}"`);
        const grant = {
          subject: need(v, 'subject'),
          resources: list(v, 'resources') ?? [need(v, 'resources')],
          actions: list(v, 'actions') ?? [need(v, 'actions')],
          sourceIps: list(v, 'source-ips') ?? [],
          decision: (/^allow$/i.test(decision) ? 'Allow' : 'Deny') as 'Allow' | 'Deny',
        };
        const addrs = action === 'create' ? await admin.createAcl(grant, target) : await admin.updateAcl(grant, target);
        written(out, `${action} acl`, addrs);
        return;
      }
      case 'delete':
        written(out, 'delete acl', await admin.deleteAcl(need(v, 'subject'), str(v, 'resource'), target));
        return;
      case 'get': {
        const a = await admin.getAcl(need(v, 'subject'), target);
        out.emit(a, () => {
          if (a) printAcls(out, [a]);
        });
        return;
      }
      case 'list': {
        const filter = { subject: str(v, 'subject'), resource: str(v, 'resource') };
        const acls = await admin.listAcl(
          Object.fromEntries(Object.entries(filter).filter(([, x]) => x !== undefined)),
          target,
        );
        out.emit(acls, () => {
          if (acls.length > 0) printAcls(out, acls);
        });
        return;
      }
      default:
        throw new UsageError(`admin auth acl: the action is one of ${ACTIONS}, got "${action}"`);
    }
  },
};

export const auth: AdminCommandGroup = {
  name: 'auth',
  summary: '5.x auth (ACL 2.0) users and ACLs',
  subcommands: [user, acl],
};
