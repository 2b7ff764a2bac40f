import { defineHeader, F, type HeaderOf } from './define.js';

/**
 * Headers of the 5.x auth management requests (ACL 2.0, RIP-66; Java's remoting/protocol/header
 * classes of 5.3.3). Every field is optional on the wire, as in Java (no @CFNotNull): the broker
 * answers a missing name with its own remark ("The username is blank").
 */

/** AUTH_CREATE_USER 3001, AUTH_UPDATE_USER 3002, AUTH_DELETE_USER 3003, AUTH_GET_USER 3004: username String. */
const userSpec = { username: F.string.optional() };
export const UserRequestHeader = defineHeader('UserRequestHeader', userSpec);
export type UserRequestHeader = HeaderOf<typeof userSpec>;

/** AUTH_LIST_USER 3005, `ListUsersRequestHeader`: filter String (a user is listed when its name contains it). */
const listUsersSpec = { filter: F.string.optional() };
export const ListUsersRequestHeader = defineHeader('ListUsersRequestHeader', listUsersSpec);
export type ListUsersRequestHeader = HeaderOf<typeof listUsersSpec>;

/** AUTH_CREATE_ACL 3006, AUTH_UPDATE_ACL 3007, AUTH_GET_ACL 3009: subject String ("User:alice"). */
const aclSpec = { subject: F.string.optional() };
export const AclRequestHeader = defineHeader('AclRequestHeader', aclSpec);
export type AclRequestHeader = HeaderOf<typeof aclSpec>;

/**
 * AUTH_DELETE_ACL 3008, `DeleteAclRequestHeader`: subject String | policyType String ("Custom"
 * when absent) | resource String (the one entry to delete; the subject's whole ACL when absent).
 */
const deleteAclSpec = {
  subject: F.string.optional(),
  policyType: F.string.optional(),
  resource: F.string.optional(),
};
export const DeleteAclRequestHeader = defineHeader('DeleteAclRequestHeader', deleteAclSpec);
export type DeleteAclRequestHeader = HeaderOf<typeof deleteAclSpec>;

/**
 * AUTH_LIST_ACL 3010, `ListAclsRequestHeader`: subjectFilter String (subject keys containing it) |
 * resourceFilter String (entries whose resource contains it).
 */
const listAclsSpec = { subjectFilter: F.string.optional(), resourceFilter: F.string.optional() };
export const ListAclsRequestHeader = defineHeader('ListAclsRequestHeader', listAclsSpec);
export type ListAclsRequestHeader = HeaderOf<typeof listAclsSpec>;
