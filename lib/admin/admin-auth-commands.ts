import type { AclInfo, UserInfo } from '../../protocol/body/auth-bodies.js';
import type { AclGrant, AdminAuth, NewUser, UserUpdate } from './admin-auth.js';
import type { AdminTarget } from './admin-ops-types.js';
import { AdminStatsCommands } from './admin-stats.js';

const AUTH = new WeakMap<AdminAuthCommands, AdminAuth>();

/** Gives an AdminClient its auth commands (admin-client.ts calls it once, in its constructor). */
export function bindAdminAuth(client: AdminAuthCommands, auth: AdminAuth): void {
  AUTH.set(client, auth);
}

function authOf(client: AdminAuthCommands): AdminAuth {
  // bound in AdminClient's constructor before any method can be called
  return AUTH.get(client)!;
}

/**
 * 5.x auth (ACL 2.0, Apache 5.3+): users and their ACLs, as mqadmin createUser … listAcl and
 * Java's DefaultMQAdminExt manage them (AUTH_CREATE_USER 3001 … AUTH_LIST_ACL 3010). Writes go to
 * `target.brokerAddr`, or to every broker, masters and slaves, of `target.clusterName` (of every
 * cluster when neither is given), and resolve to the addresses written; reads ask the masters and
 * answer the first that has something. A refusal (an existing user, a user that is not, a
 * caller that is not allowed) is AdminPermissionError with the broker's reason.
 * @category Admin
 */
export abstract class AdminAuthCommands extends AdminStatsCommands {
  /** `createUser`: a user that signs with `password` as its secret key (Normal unless `userType` Super; only a Super user may create one). */
  createUser(user: NewUser, target: AdminTarget = {}): Promise<string[]> {
    return authOf(this).createUser(user, target);
  }

  /** `updateUser`: the given fields of a user changed (`userStatus` 'disable' refuses its requests). */
  updateUser(user: UserUpdate, target: AdminTarget = {}): Promise<string[]> {
    return authOf(this).updateUser(user, target);
  }

  /** `deleteUser`: the user and its ACL; nothing happens for a user that does not exist. */
  deleteUser(username: string, target: AdminTarget = {}): Promise<string[]> {
    return authOf(this).deleteUser(username, target);
  }

  /** `getUser`: the user (password included, as the broker answers it), or null. */
  getUser(username: string, target: AdminTarget = {}): Promise<UserInfo | null> {
    return authOf(this).getUser(username, target);
  }

  /** `listUser`: the users whose name contains `filter` (all without one), in name order. */
  listUser(filter?: string, target: AdminTarget = {}): Promise<UserInfo[]> {
    return authOf(this).listUser(filter, target);
  }

  /**
   * `createAcl`: one entry per resource in the subject's Custom policy (an entry for the same
   * resource is replaced). With a namespace, `Topic:` and `Group:` names are the application's.
   */
  createAcl(grant: AclGrant, target: AdminTarget = {}): Promise<string[]> {
    return authOf(this).createAcl(grant, target);
  }

  /** `updateAcl`: the same as createAcl on the broker (entries merged by resource). */
  updateAcl(grant: AclGrant, target: AdminTarget = {}): Promise<string[]> {
    return authOf(this).updateAcl(grant, target);
  }

  /** `deleteAcl`: the entry of `resource` in the subject's Custom policy, or (no resource) its whole ACL. */
  deleteAcl(subject: string, resource?: string, target: AdminTarget = {}): Promise<string[]> {
    return authOf(this).deleteAcl(subject, resource, target);
  }

  /** `getAcl`: the subject's ACL, or null when it has none (AdminPermissionError when the user does not exist). */
  getAcl(subject: string, target: AdminTarget = {}): Promise<AclInfo | null> {
    return authOf(this).getAcl(subject, target);
  }

  /** `listAcl`: the ACLs whose subject contains `filter.subject`, keeping the entries whose resource contains `filter.resource`. */
  listAcl(filter: { subject?: string; resource?: string } = {}, target: AdminTarget = {}): Promise<AclInfo[]> {
    return authOf(this).listAcl(filter, target);
  }
}
