import { RequestCode, ResponseCode, type RemotingCommand } from '../../../protocol/index.js';
import { ACL_ACCESS_KEY } from '../../remoting/acl.js';
import { matchPolicyEntry, resourceKey, userSubject, type AuthAction, type AuthResource } from './auth-model.js';
import type { AuthStore } from './auth-store.js';
import { RequestAccessParseError } from './errors.js';
import {
  signatureMatches,
  type ChannelInfo,
  type CheckScope,
  type Decision,
  type PermissionChecker,
} from './permission-checker.js';
import { Permission } from './permission.js';
import { ADMIN_CODES, requestAccess } from './request-access.js';
import { hostOfRemoteAddress } from './remote-address.js';

/** What the broker checks with 5.x auth (startBroker's `auth` option, Java's AuthConfig keys). */
export interface AuthCheckSettings {
  /** Every request must be signed by a stored, enabled user (DefaultAuthenticationProvider). */
  authenticationEnabled: boolean;
  /** Every request's resources must be allowed by the user's ACL, or the user be Super (DefaultAuthorizationProvider). */
  authorizationEnabled: boolean;
  /** Request codes authentication skips (authenticationWhitelist). */
  authenticationWhitelist: ReadonlySet<number>;
  /** Request codes authorization skips (authorizationWhitelist). */
  authorizationWhitelist: ReadonlySet<number>;
  /** The cluster name of Cluster resources (AuthConfig.clusterName = brokerClusterName). */
  clusterName: string;
}

/** One thing a request needs: a resource and the actions, any of which is enough (DefaultAuthorizationContext). */
export interface AuthNeed {
  resource: AuthResource;
  actions: AuthAction[];
}

const AUTH_READS = new Set<number>([
  RequestCode.AUTH_GET_USER,
  RequestCode.AUTH_LIST_USER,
  RequestCode.AUTH_GET_ACL,
  RequestCode.AUTH_LIST_ACL,
]);

const literal = (type: 'Topic' | 'Group' | 'Cluster', name: string): AuthResource => ({
  type,
  name,
  pattern: 'LITERAL',
});

/**
 * What a request needs under 5.x authorization (DefaultAuthorizationContextBuilder): the topics
 * and groups of requestAccess (PUB → Pub, SUB → Sub; a retry topic is its group), and for admin
 * codes what their header's @RocketMQAction names: UPDATE_AND_CREATE_TOPIC Create and
 * DELETE_TOPIC_IN_BROKER Delete on the topic, DELETE_SUBSCRIPTIONGROUP Delete on the group, the
 * AUTH_GET/LIST codes Get on the cluster, every other admin code Update on the cluster (Java leaves
 * a few of them, those without a header class, to any authenticated user). Codes that name no
 * resource need nothing beyond authentication, as in Java.
 */
export function authNeeds(
  request: Pick<RemotingCommand, 'code' | 'extFields' | 'body'>,
  clusterName: string,
): AuthNeed[] {
  const ext = request.extFields ?? {};
  const code = request.code;
  if (ADMIN_CODES.has(code)) {
    if (code === RequestCode.UPDATE_AND_CREATE_TOPIC && ext.topic)
      return [{ resource: literal('Topic', ext.topic), actions: ['Create'] }];
    if (code === RequestCode.DELETE_TOPIC_IN_BROKER && ext.topic)
      return [{ resource: literal('Topic', ext.topic), actions: ['Delete'] }];
    if (code === RequestCode.DELETE_SUBSCRIPTIONGROUP && ext.groupName)
      return [{ resource: literal('Group', ext.groupName), actions: ['Delete'] }];
    return [{ resource: literal('Cluster', clusterName), actions: AUTH_READS.has(code) ? ['Get'] : ['Update'] }];
  }
  return requestAccess(request).resources.map((r) => ({
    resource: literal(r.kind === 'topic' ? 'Topic' : 'Group', r.name),
    actions: [r.needed === Permission.PUB ? 'Pub' : 'Sub'],
  }));
}

/**
 * 5.x auth (ACL 2.0) as a PermissionChecker, over a broker's AuthStore, in Apache 5.3's order:
 *   authentication (unless the code is white-listed): an AccessKey ("username cannot be null."),
 *   a stored user ("User:U is not found."), enabled ("User:U is disabled."), the HmacSHA1
 *   signature made with its password ("check signature failed.");
 *   authorization (unless white-listed), per resource the request needs (authNeeds): the user
 *   exists ("User:U not found."); a Super user passes; else the most specific entry of its ACL
 *   matching the resource, an action and the source IP must be Allow ("User:U has no permission
 *   to access R from IP, no matched policies." / "…, the decision is deny.").
 * A refusal is NO_PERMISSION with that message as remark, as Apache's AbortProcessException.
 * The name server (scope "namesrv") checks only admin codes: Apache's name server checks nothing,
 * but this one creates topics on its brokers.
 */
export class AuthChecker implements PermissionChecker {
  constructor(
    private readonly store: AuthStore,
    private readonly settings: AuthCheckSettings,
    private readonly scope: CheckScope = 'broker',
  ) {}

  check(request: RemotingCommand, channel: ChannelInfo): Decision {
    if (this.scope === 'namesrv' && !ADMIN_CODES.has(request.code))
      return { allowed: true, principal: null, via: 'open' };
    const username = request.extFields?.[ACL_ACCESS_KEY];
    const s = this.settings;
    if (s.authenticationEnabled && !s.authenticationWhitelist.has(request.code)) {
      if (username === undefined || username === '') return refuse(null, 'username cannot be null.');
      const user = this.store.findUser(username);
      if (!user) return refuse(username, `User:${username} is not found.`);
      if (user.userStatus === 'disable') return refuse(username, `User:${username} is disabled.`);
      if (!signatureMatches(request, user.password)) return refuse(username, 'check signature failed.');
    }
    if (s.authorizationEnabled && !s.authorizationWhitelist.has(request.code)) {
      let needs: AuthNeed[];
      try {
        needs = authNeeds(request, s.clusterName);
      } catch (err) {
        if (err instanceof RequestAccessParseError)
          return refuse(username ?? null, 'parse authorization context error.');
        throw err;
      }
      if (needs.length === 0) return { allowed: true, principal: username ?? null, via: 'signature' };
      if (username === undefined || username === '')
        return refuse(null, 'Authorization failed. Please verify your access rights and try again.');
      const user = this.store.findUser(username);
      if (!user) return refuse(username, `User:${username} not found.`);
      if (user.userType === 'Super') return { allowed: true, principal: username, via: 'signature' };
      const subject = userSubject(username);
      const acl = this.store.findAcl(subject);
      const ip = hostOfRemoteAddress(channel.remoteAddress);
      for (const n of needs) {
        const entry = acl ? matchPolicyEntry(acl, n.resource, n.actions, ip) : null;
        const to = `${subject} has no permission to access ${resourceKey(n.resource)} from ${ip}`;
        if (entry === null) return refuse(username, `${to}, no matched policies.`);
        if (entry.decision === 'Deny') return refuse(username, `${to}, the decision is deny.`);
      }
    }
    return { allowed: true, principal: username ?? null, via: 'signature' };
  }
}

function refuse(accessKey: string | null, reason: string): Decision {
  return { allowed: false, accessKey, responseCode: ResponseCode.NO_PERMISSION, remark: reason, reason };
}
