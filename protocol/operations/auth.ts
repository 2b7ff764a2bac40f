import {
  AclRequestHeader,
  DeleteAclRequestHeader,
  ListAclsRequestHeader,
  ListUsersRequestHeader,
  UserRequestHeader,
} from '../custom-header/auth.js';
import { AclInfoBody, AclInfoListBody, UserInfoBody, UserInfoListBody } from '../body/auth-bodies.js';
import { EmptyHeader, op } from '../operation.js';

/**
 * Rows of the operation table for 5.x auth management (ACL 2.0 users and ACLs, AUTH_* 3001–3010),
 * what mqadmin createUser … listAcl send to a broker. Every answer is SUCCESS, or NO_PERMISSION
 * with the reason in the remark (Java's AuthenticationException / AuthorizationException), or
 * INVALID_PARAMETER / SYSTEM_ERROR. A GET of nothing is SUCCESS without a body.
 */
export const AuthOperations = {
  AUTH_CREATE_USER: op('AUTH_CREATE_USER', {
    request: UserRequestHeader,
    response: EmptyHeader,
    requestBody: UserInfoBody,
    responseBody: 'none',
  }),
  AUTH_UPDATE_USER: op('AUTH_UPDATE_USER', {
    request: UserRequestHeader,
    response: EmptyHeader,
    requestBody: UserInfoBody,
    responseBody: 'none',
  }),
  AUTH_DELETE_USER: op('AUTH_DELETE_USER', {
    request: UserRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  AUTH_GET_USER: op('AUTH_GET_USER', {
    request: UserRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: UserInfoBody,
  }),
  AUTH_LIST_USER: op('AUTH_LIST_USER', {
    request: ListUsersRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: UserInfoListBody,
  }),
  AUTH_CREATE_ACL: op('AUTH_CREATE_ACL', {
    request: AclRequestHeader,
    response: EmptyHeader,
    requestBody: AclInfoBody,
    responseBody: 'none',
  }),
  AUTH_UPDATE_ACL: op('AUTH_UPDATE_ACL', {
    request: AclRequestHeader,
    response: EmptyHeader,
    requestBody: AclInfoBody,
    responseBody: 'none',
  }),
  AUTH_DELETE_ACL: op('AUTH_DELETE_ACL', {
    request: DeleteAclRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: 'none',
  }),
  AUTH_GET_ACL: op('AUTH_GET_ACL', {
    request: AclRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: AclInfoBody,
  }),
  AUTH_LIST_ACL: op('AUTH_LIST_ACL', {
    request: ListAclsRequestHeader,
    response: EmptyHeader,
    requestBody: 'none',
    responseBody: AclInfoListBody,
  }),
} as const;
