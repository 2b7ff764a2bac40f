import { RETRY_GROUP_TOPIC_PREFIX, RequestCode, type RemotingCommand } from '../../../protocol/index.js';
import { decodeHeartbeatData } from '../../../protocol/body/heartbeat-data.js';
import { decodeLockBatchBody } from '../../../protocol/body/consumer-bodies.js';
import { decodeBatchAckMessageRequestBody } from '../../../protocol/body/pop-bodies.js';
import { Permission, type PermissionBits } from './permission.js';
import { RequestAccessParseError } from './errors.js';

/**
 * What a request needs, whoever asks: the resources it touches with the permission each needs, and
 * whether only an administrator may send it. This is the half of access control that does not
 * depend on how users and their grants are stored: ACL 1.0's plain accounts (plain-acl-checker.ts)
 * read it; 5.x auth (users and ACLs managed with AUTH_* 3001–3010) would read the same.
 */
export interface RequestAccess {
  code: number;
  /** Only an admin account may send it (ADMIN_CODES). */
  admin: boolean;
  resources: ResourceNeed[];
}

/** One resource a request touches. A group is named without `%RETRY%`. */
export interface ResourceNeed {
  kind: 'topic' | 'group';
  name: string;
  /** Permission.PUB or Permission.SUB (Permission.ANY is met by either). */
  needed: PermissionBits;
}

/**
 * Codes only an admin account may send. Apache 4.9.x / 5.x ACL 1.0 (Permission.ADMIN_CODE) has five:
 * UPDATE_AND_CREATE_TOPIC, UPDATE_BROKER_CONFIG, DELETE_TOPIC_IN_BROKER,
 * UPDATE_AND_CREATE_SUBSCRIPTIONGROUP and DELETE_SUBSCRIPTIONGROUP. Every other request that changes
 * the broker's or name server's configuration or moves a group's offsets is added here, since Java
 * leaves them to any account with a valid signature (an ordinary account can reset any group's
 * offsets there): offset resets and clones, topic and route deletion and registration, KV config,
 * write permission of a broker, file cleaning, half-message resume, and the ACL 1.0 (50, 51, 53)
 * and 5.x auth (3001–3010) management codes.
 */
export const ADMIN_CODES: ReadonlySet<number> = new Set<number>([
  // Apache's five
  RequestCode.UPDATE_AND_CREATE_TOPIC,
  RequestCode.UPDATE_BROKER_CONFIG,
  RequestCode.DELETE_TOPIC_IN_BROKER,
  RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
  RequestCode.DELETE_SUBSCRIPTIONGROUP,
  // added here
  RequestCode.UPDATE_AND_CREATE_TOPIC_LIST,
  27, // TRIGGER_DELETE_FILES
  RequestCode.PUT_KV_CONFIG,
  RequestCode.DELETE_KV_CONFIG,
  RequestCode.REGISTER_BROKER,
  RequestCode.UNREGISTER_BROKER,
  RequestCode.WIPE_WRITE_PERM_OF_BROKER,
  RequestCode.ADD_WRITE_PERM_OF_BROKER,
  RequestCode.RESET_CONSUMER_OFFSET_IN_BROKER,
  RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
  RequestCode.DELETE_TOPIC_IN_NAMESRV,
  RequestCode.REGISTER_TOPIC_IN_NAMESRV,
  225, // UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST
  306, // CLEAN_EXPIRED_CONSUMEQUEUE
  RequestCode.CLONE_GROUP_OFFSET,
  316, // CLEAN_UNUSED_TOPIC
  318, // UPDATE_NAMESRV_CONFIG
  RequestCode.RESUME_CHECK_HALF_MESSAGE,
  RequestCode.DELETE_EXPIRED_COMMITLOG,
  353, // UPDATE_AND_GET_GROUP_FORBIDDEN
  513, // UPDATE_AND_CREATE_STATIC_TOPIC
  1009, // UPDATE_CONTROLLER_CONFIG
  1011, // CLEAN_BROKER_DATA
  2001, // UPDATE_COLD_DATA_FLOW_CTR_CONFIG
  50, // UPDATE_AND_CREATE_ACL_CONFIG (4.9)
  51, // DELETE_ACL_CONFIG (4.9)
  53, // UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (4.9)
  3001,
  3002,
  3003,
  3004,
  3005,
  3006,
  3007,
  3008,
  3009,
  3010, // AUTH_* (5.x auth 2.0)
]);

/** The trace topic every account may publish to (Apache skips its check for RMQ_SYS_TRACE_TOPIC PUB). */
export const TRACE_TOPIC = 'RMQ_SYS_TRACE_TOPIC';

function groupOfRetryTopic(topic: string): string | null {
  return topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ? topic.slice(RETRY_GROUP_TOPIC_PREFIX.length) : null;
}

/**
 * The resources a request touches, read from its raw extFields (short names for the V2 send
 * header: `b` topic, `a` producer group) and, for HEART_BEAT, (UN)LOCK_BATCH_MQ and
 * BATCH_ACK_MESSAGE, its body. Follows Apache's PlainAccessResource.parse (5.1) code by code, with
 * these differences: a send to `%RETRY%G` needs SUB on group G (Apache reads the producer group
 * field, `group`, which a V1 header does not even have); LITE_PULL_MESSAGE, POP_MESSAGE,
 * ACK_MESSAGE, BATCH_ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME, LOCK/UNLOCK_BATCH_MQ need SUB on
 * their topic and group; SEND_REPLY_MESSAGE(_V2) and RECALL_MESSAGE need PUB on the topic. Codes
 * not named here need no resource: any authenticated account may send them (as in Apache).
 */
export function requestAccess(request: Pick<RemotingCommand, 'code' | 'extFields' | 'body'>): RequestAccess {
  const code = request.code;
  const ext = request.extFields ?? {};
  const resources: ResourceNeed[] = [];
  const group = (name: string | undefined): void => {
    if (name) resources.push({ kind: 'group', name, needed: Permission.SUB });
  };
  // A retry topic is its group's resource (Apache checks %RETRY%G against the group grants)
  const topic = (name: string | undefined, needed: PermissionBits): void => {
    if (!name) return;
    const g = groupOfRetryTopic(name);
    if (g !== null) group(g);
    else resources.push({ kind: 'topic', name, needed });
  };
  const send = (t: string | undefined): void => topic(t, Permission.PUB);
  switch (code) {
    case RequestCode.SEND_MESSAGE:
    case RequestCode.SEND_REPLY_MESSAGE:
      send(ext.topic);
      break;
    case RequestCode.SEND_MESSAGE_V2:
    case RequestCode.SEND_BATCH_MESSAGE:
    case RequestCode.SEND_REPLY_MESSAGE_V2:
      send(ext.b);
      break;
    case RequestCode.RECALL_MESSAGE:
      topic(ext.topic, Permission.PUB);
      break;
    case RequestCode.CONSUMER_SEND_MSG_BACK:
      group(ext.group);
      break;
    case RequestCode.PULL_MESSAGE:
    case RequestCode.LITE_PULL_MESSAGE:
    case RequestCode.POP_MESSAGE:
    case RequestCode.ACK_MESSAGE:
    case RequestCode.CHANGE_MESSAGE_INVISIBLETIME:
    case RequestCode.UPDATE_CONSUMER_OFFSET:
      topic(ext.topic, Permission.SUB);
      group(ext.consumerGroup);
      break;
    case RequestCode.QUERY_MESSAGE:
      topic(ext.topic, Permission.SUB);
      break;
    case RequestCode.UNREGISTER_CLIENT:
    case RequestCode.GET_CONSUMER_LIST_BY_GROUP:
      group(ext.consumerGroup);
      break;
    case RequestCode.HEART_BEAT: {
      const hb = parseBody(request.body, decodeHeartbeatData, 'HEART_BEAT');
      for (const c of hb.consumerDataSet) {
        group(c.groupName);
        for (const s of c.subscriptionDataSet) topic(s.topic, Permission.SUB);
      }
      break;
    }
    case RequestCode.LOCK_BATCH_MQ:
    case RequestCode.UNLOCK_BATCH_MQ: {
      const b = parseBody(
        request.body,
        decodeLockBatchBody,
        code === RequestCode.LOCK_BATCH_MQ ? 'LOCK_BATCH_MQ' : 'UNLOCK_BATCH_MQ',
      );
      group(b.consumerGroup);
      for (const mq of b.mqSet) topic(mq.topic, Permission.SUB);
      break;
    }
    case RequestCode.BATCH_ACK_MESSAGE: {
      const b = parseBody(request.body, decodeBatchAckMessageRequestBody, 'BATCH_ACK_MESSAGE');
      for (const a of b.acks) {
        topic(a.topic, Permission.SUB);
        group(a.consumerGroup);
      }
      break;
    }
    default:
      break;
  }
  return { code, admin: ADMIN_CODES.has(code), resources: dedupe(resources) };
}

function parseBody<T>(body: Buffer | null, decode: (b: Buffer) => T, what: string): T {
  try {
    return decode(body ?? Buffer.alloc(0));
  } catch (err) {
    throw new RequestAccessParseError(`the ${what} body cannot be read: ${(err as Error).message}`);
  }
}

/** A heartbeat names its group again with its retry topic; check each need once. */
function dedupe(resources: ResourceNeed[]): ResourceNeed[] {
  if (resources.length < 2) return resources;
  const seen = new Map<string, ResourceNeed>();
  for (const r of resources) seen.set(`${r.kind}\u0000${r.needed}\u0000${r.name}`, r);
  return [...seen.values()];
}
