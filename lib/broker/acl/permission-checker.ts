import { ResponseCode, createResponse, requestCodeName, type RemotingCommand } from '../../../protocol/index.js';
import { ACL_ACCESS_KEY, ACL_SIGNATURE, aclSignature, aclSignedContent } from '../../remoting/acl.js';
import type { RequestGate } from '../../remoting/connection.js';
import { Permission, permits } from './permission.js';
import type { PlainAclData } from './plain-acl-config.js';
import { hostOfRemoteAddress } from './remote-address.js';
import { RequestAccessParseError } from './errors.js';
import { TRACE_TOPIC, requestAccess, type RequestAccess } from './request-access.js';

/** What the checker knows of the connection a request came on. */
export interface ChannelInfo {
  /** "host:port" or "[v6]:port", as RemotingConnection.remoteAddress. */
  readonly remoteAddress: string;
}

/** Allowed, and by what: a valid signature, a white-listed address, or no check at all. */
export interface Allowed {
  allowed: true;
  /** The access key the request was signed with, or that its white address belongs to; null for a global white address. */
  principal: string | null;
  via: 'signature' | 'account-white-address' | 'global-white-address' | 'open';
}

/** Refused: the answer's code and remark, and why in plain words for the log. */
export interface Refused {
  allowed: false;
  /** The access key the request named, when it named one. */
  accessKey: string | null;
  /** The response code of the refusal (ACL 1.0 on a 4.9 broker: SYSTEM_ERROR; 5.x auth: NO_PERMISSION). */
  responseCode: number;
  /** What the client reads. */
  remark: string;
  /** The reason alone, for logs and tests. */
  reason: string;
}

export type Decision = Allowed | Refused;

/**
 * Decides whether a request may reach its processor. The broker and the name server ask one before
 * every request (the RemotingServer's requestGate); ACL 1.0's plain accounts are one implementation
 * (PlainAclChecker), and 5.x auth (users and ACLs managed with AUTH_* 3001–3010) is meant
 * to be another, reading the same RequestAccess (request-access.ts) for what a request needs.
 */
export interface PermissionChecker {
  check(request: RemotingCommand, channel: ChannelInfo): Decision;
}

/** Java's class name in the remark: tools and tests match Apache 4.9's "AclException: <reason>". */
const ACL_EXCEPTION = 'org.apache.rocketmq.acl.common.AclException';
/** QUERY_MESSAGE's flag that Apache's PlainAccessValidator leaves out of the signed content. */
const UNIQUE_KEY_QUERY = '_UNIQUE_KEY_QUERY';

/** Where a checker runs: a broker checks everything; the name server only the admin codes (see below). */
export type CheckScope = 'broker' | 'namesrv';

/**
 * Apache's ACL 1.0 (PlainAccessValidator + PlainPermissionManager.validate, 4.9.x) over a compiled
 * plain_acl.yml, in Apache's order:
 *   1. a global white address: allowed, nothing else checked;
 *   2. no AccessKey: refused "No accessKey is configured"; an unknown one: "No acl config for K";
 *   3. the account's white address: allowed without signature or permission check;
 *   4. the signature (HmacSHA1 over the sorted extFields values but Signature and
 *      _UNIQUE_KEY_QUERY, then the body; Base64) must match: "Check signature failed for accessKey=K";
 *   5. PUB to RMQ_SYS_TRACE_TOPIC is always allowed;
 *   6. an admin code from a non-admin: "Need admin permission for request code=N, but accessKey=K is not";
 *   7. every resource the request needs (request-access.ts) against the account's grants, else the
 *      default permission: "No default permission for topic=T" / "group=G".
 * A refusal is answered SYSTEM_ERROR with remark "org.apache.rocketmq.acl.common.AclException: <reason>",
 * as Apache 4.9's broker answers an AclException thrown by its RPC hook.
 *
 * The name server (scope "namesrv"): Apache's does not check ACL at all, and Java clients read
 * routes from it unsigned when they have no credentials; but this name server also creates and
 * deletes topics on every broker (UPDATE_AND_CREATE_TOPIC, DELETE_TOPIC_IN_NAMESRV), so the admin
 * codes are checked there (steps 1–4 and 6) and every other code is open.
 */
export class PlainAclChecker implements PermissionChecker {
  constructor(
    private readonly data: PlainAclData,
    private readonly scope: CheckScope = 'broker',
  ) {}

  check(request: RemotingCommand, channel: ChannelInfo): Decision {
    let access: RequestAccess;
    try {
      access = requestAccess(request);
    } catch (err) {
      if (err instanceof RequestAccessParseError) return refuse(null, err.message);
      throw err;
    }
    if (this.scope === 'namesrv' && !access.admin) return { allowed: true, principal: null, via: 'open' };
    const host = hostOfRemoteAddress(channel.remoteAddress);
    for (const w of this.data.globalWhite)
      if (w.matches(host)) return { allowed: true, principal: null, via: 'global-white-address' };
    const ext = request.extFields;
    const accessKey = ext?.[ACL_ACCESS_KEY];
    if (accessKey == null) return refuse(null, 'No accessKey is configured');
    const account = this.data.accounts.get(accessKey);
    if (!account) return refuse(accessKey, `No acl config for ${accessKey}`);
    if (account.white.matches(host)) return { allowed: true, principal: accessKey, via: 'account-white-address' };
    if (!signatureMatches(request, account.secretKey))
      return refuse(accessKey, `Check signature failed for accessKey=${accessKey}`);
    if (access.resources.some((r) => r.kind === 'topic' && r.name === TRACE_TOPIC && r.needed === Permission.PUB)) {
      return { allowed: true, principal: accessKey, via: 'signature' };
    }
    if (access.admin && !account.admin) {
      return refuse(
        accessKey,
        `Need admin permission for request code=${request.code}, but accessKey=${accessKey} is not`,
      );
    }
    if (!(account.admin && account.topicPerms === null && account.groupPerms === null)) {
      for (const r of access.resources) {
        const grants = r.kind === 'topic' ? account.topicPerms : account.groupPerms;
        const owned = grants?.get(r.name) ?? (r.kind === 'topic' ? account.defaultTopicPerm : account.defaultGroupPerm);
        if (!permits(r.needed, owned)) return refuse(accessKey, `No default permission for ${r.kind}=${r.name}`);
      }
    }
    return { allowed: true, principal: accessKey, via: 'signature' };
  }
}

function refuse(accessKey: string | null, reason: string): Refused {
  return {
    allowed: false,
    accessKey,
    responseCode: ResponseCode.SYSTEM_ERROR,
    remark: `${ACL_EXCEPTION}: ${reason}`,
    reason,
  };
}

/** Compares in time independent of where the texts differ (node:crypto is loaded only when signing). */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The signature Apache's broker computes leaves _UNIQUE_KEY_QUERY out, while Java's
 * AclClientRPCHook (and rocketwire's client) sign every extField, that one included: both forms
 * are accepted (each is an HMAC with the account's secret).
 */
export function signatureMatches(request: RemotingCommand, secretKey: string): boolean {
  const ext = request.extFields!;
  const given = ext[ACL_SIGNATURE];
  if (given == null) return false;
  if (UNIQUE_KEY_QUERY in ext) {
    const { [UNIQUE_KEY_QUERY]: _omitted, ...rest } = ext;
    if (sameText(aclSignature(aclSignedContent(rest, request.body), secretKey), given)) return true;
  }
  return sameText(aclSignature(aclSignedContent(ext, request.body), secretKey), given);
}

/** What the gate does with refusals besides answering them. */
export interface AclGateOptions {
  /** One line per refusal kind and peer (see below). */
  warn?: (line: string) => void;
  /** Who is asking, for the log line ("broker-a", "name server"). */
  server: string;
}

/** Distinct (peer host, access key, reason) log lines kept before the memory of them is reset. */
const MAX_LOGGED_REFUSALS = 1024;

/**
 * The RemotingServer requestGate of a checker: answers a refused request with the refusal (nothing
 * for a oneway request) and logs it through `warn`, once per peer host, access key and reason, so
 * that a client retrying a refused request does not flood the log.
 */
export function aclRequestGate(checker: PermissionChecker, options: AclGateOptions): RequestGate {
  const logged = new Set<string>();
  return (request, conn) => {
    const d = checker.check(request, conn);
    if (d.allowed) return null;
    const key = `${hostOfRemoteAddress(conn.remoteAddress)}\u0000${d.accessKey ?? ''}\u0000${d.reason}`;
    if (options.warn && !logged.has(key)) {
      if (logged.size >= MAX_LOGGED_REFUSALS) logged.clear();
      logged.add(key);
      options.warn(
        `${options.server} refused ${requestCodeName(request.code)} (${request.code}) from ${conn.remoteAddress}: ${d.reason} (logged once per peer, key and reason)`,
      );
    }
    return createResponse(request, d.responseCode, { remark: d.remark });
  };
}
