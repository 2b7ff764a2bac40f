import {
  AclInfoBody,
  AclInfoListBody,
  Operations,
  ResponseCode,
  UserInfoBody,
  UserInfoListBody,
  type AclInfo,
  type RemotingCommand,
} from '../../../protocol/internal.js';
import type { RemotingServer } from '../../remoting/index.js';
import { ACL_ACCESS_KEY } from '../../remoting/acl.js';
import { aclInfoOf, aclOf, userChangeOf, userInfoOf } from '../acl/auth-convert.js';
import type { AuthStore } from '../acl/auth-store.js';
import { AuthMetadataError } from '../acl/errors.js';
import { fail, ok, registerOperation, type Answer } from './request-processor.js';

/**
 * AdminBrokerProcessor's 5.x auth management requests (AUTH_CREATE_USER 3001 … AUTH_LIST_ACL
 * 3010) over the broker's AuthStore. Answers as Apache 5.3.3: a refusal of the metadata managers
 * is NO_PERMISSION with their message; a blank username INVALID_PARAMETER "The username is
 * blank"; a GET of nothing, or a LIST of nothing, SUCCESS without a body. Only a Super user (or a
 * request that names no AccessKey, i.e. authentication is off) may create, update or delete a
 * Super user. Whether the caller may send these codes at all is the permission checker's
 * business (Update / Get on the cluster under authorization).
 */
export class AuthProcessor {
  constructor(private readonly store: AuthStore) {}

  /** AdminBrokerProcessor.isNotSuperUserLogin: signed by a user that is not Super. */
  private notSuperLogin(request: RemotingCommand): boolean {
    const ak = request.extFields?.[ACL_ACCESS_KEY];
    if (ak === undefined || ak === '') return false;
    return !this.store.isSuperUser(ak);
  }

  register(server: RemotingServer): void {
    const s = this.store;
    registerOperation(server, Operations.AUTH_CREATE_USER, ({ header, body, request }) => {
      if (!header.username) return fail(ResponseCode.INVALID_PARAMETER, 'The username is blank');
      const change = userChangeOf({ ...body, username: header.username });
      if (change.userType === 'Super' && this.notSuperLogin(request))
        return fail(ResponseCode.SYSTEM_ERROR, 'The super user can only be create by super user');
      return guard(() => s.createUser(change));
    });
    registerOperation(server, Operations.AUTH_UPDATE_USER, ({ header, body, request }) => {
      if (!header.username) return fail(ResponseCode.INVALID_PARAMETER, 'The username is blank');
      const change = userChangeOf({ ...body, username: header.username });
      const notSuper = this.notSuperLogin(request);
      if (change.userType === 'Super' && notSuper)
        return fail(ResponseCode.SYSTEM_ERROR, 'The super user can only be update by super user');
      return guard(() => {
        const old = s.getUser(change.username);
        if (!old) throw new AuthMetadataError('The user is not exist');
        if (old.userType === 'Super' && notSuper)
          throw new AuthMetadataError('The super user can only be update by super user');
        s.updateUser(change);
      });
    });
    registerOperation(server, Operations.AUTH_DELETE_USER, ({ header, request }) =>
      guard(() => {
        const old = s.getUser(header.username);
        if (!old) return;
        // Java's message says "update" here too
        if (old.userType === 'Super' && this.notSuperLogin(request))
          throw new AuthMetadataError('The super user can only be update by super user');
        s.deleteUser(old.username);
      }),
    );
    registerOperation(server, Operations.AUTH_GET_USER, ({ header }) => {
      if (!header.username?.trim()) return fail(ResponseCode.INVALID_PARAMETER, 'The username is blank');
      return guard(() => {
        const u = s.getUser(header.username);
        return u ? UserInfoBody.encode(userInfoOf(u)) : null;
      });
    });
    registerOperation(server, Operations.AUTH_LIST_USER, ({ header }) => {
      const users = s.listUsers(header.filter);
      return ok({ body: users.length > 0 ? UserInfoListBody.encode(users.map(userInfoOf)) : null });
    });
    const putAcl = (subject: string | undefined, body: AclInfo | null | undefined): Answer => {
      if (!body || body.policies.length === 0) return fail(ResponseCode.SYSTEM_ERROR, 'The body of acl is null');
      return guard(() => s.putAcl(aclOf(body, subject)));
    };
    registerOperation(server, Operations.AUTH_CREATE_ACL, ({ header, body }) => putAcl(header.subject, body));
    registerOperation(server, Operations.AUTH_UPDATE_ACL, ({ header, body }) => putAcl(header.subject, body));
    registerOperation(server, Operations.AUTH_DELETE_ACL, ({ header }) =>
      guard(() => s.deleteAcl(header.subject, header.policyType, header.resource)),
    );
    registerOperation(server, Operations.AUTH_GET_ACL, ({ header }) =>
      guard(() => {
        const acl = s.getAcl(header.subject);
        return acl ? AclInfoBody.encode(aclInfoOf(acl)) : null;
      }),
    );
    registerOperation(server, Operations.AUTH_LIST_ACL, ({ header }) => {
      const acls = s.listAcls(header.subjectFilter, header.resourceFilter);
      return ok({ body: acls.length > 0 ? AclInfoListBody.encode(acls.map(aclInfoOf)) : null });
    });
  }
}

/** SUCCESS (with the body `f` returns, if any), or NO_PERMISSION with an AuthMetadataError's message (handleAuthException). */
function guard(f: () => Buffer | null | void): Answer {
  try {
    const body = f();
    return ok({ body: body ?? null });
  } catch (err) {
    if (err instanceof AuthMetadataError) return fail(ResponseCode.NO_PERMISSION, err.message);
    throw err;
  }
}
