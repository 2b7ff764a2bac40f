import { operationOf, RequestCode, requestCodeName, ResponseCode, responseCodeName } from '../../../protocol/index.js';
import { requestTopicAndGroup } from '../stats.js';
import { defined, type DoctorCheck } from './check.js';
import type { Finding } from './finding.js';
import { queueOf, type DoctorContext, type DoctorFrame, type SeenRequestInfo } from './observe.js';

const R = ResponseCode;

/** What a refusal usually means, and whether it loses or stalls messages ('error') or costs time ('warning'). */
const MEANINGS: ReadonlyMap<number, { severity: 'error' | 'warning'; meaning: string }> = new Map([
  [
    R.SYSTEM_BUSY,
    {
      severity: 'warning',
      meaning:
        "The broker is shedding load: its request queue waited too long ([TIMEOUT_CLEAN_QUEUE]), the commit log lock was held too long ([PC_SYNCHRONIZED]) or its memory/connection buffers are full ([OVERLOAD], [REJECTREQUEST]). Producers retry on another broker; look at the broker's disk and page cache, or send less.",
    },
  ],
  [
    R.FLOW_CONTROL,
    {
      severity: 'warning',
      meaning: 'The broker asks the client to slow down; the push consumer retries the pull 20 ms later.',
    },
  ],
  [
    R.TOPIC_NOT_EXIST,
    {
      severity: 'error',
      meaning:
        'The topic does not exist on that broker (or name server): not created, deleted, a typo, or a namespace prefix missing. With auto-creation off nothing is stored until it is created (mqadmin updateTopic / rocketwire admin topic create).',
    },
  ],
  [
    R.NO_PERMISSION,
    {
      severity: 'error',
      meaning:
        "The broker or the topic forbids it: the topic's perm lacks write (2) or read (4), the broker is read-only (brokerPermission), or ACL refused the client's credentials.",
    },
  ],
  [
    R.SUBSCRIPTION_NOT_LATEST,
    {
      severity: 'warning',
      meaning:
        "The pull carries a newer subVersion than the broker has: the consumer changed its subscription and has not heartbeated since, or the group's members disagree on the subscription. The consumer retries 1 s later; if it repeats, members subscribe differently.",
    },
  ],
  [
    R.SUBSCRIPTION_NOT_EXIST,
    {
      severity: 'error',
      meaning:
        'The broker has no subscription of the group for this topic: the consumer pulls before its heartbeat reached this broker, or heartbeats fail. Nothing is delivered until a heartbeat registers it.',
    },
  ],
  [
    R.SUBSCRIPTION_GROUP_NOT_EXIST,
    {
      severity: 'error',
      meaning:
        'The consumer group is not configured on the broker and auto-creation of groups is off (autoCreateSubscriptionGroup=false): create the group.',
    },
  ],
  [
    R.SUBSCRIPTION_PARSE_FAILED,
    {
      severity: 'error',
      meaning:
        'The broker could not parse the subscription expression (a SQL92 syntax error, or SQL92 with enablePropertyFilter off).',
    },
  ],
  [
    R.FILTER_DATA_NOT_EXIST,
    {
      severity: 'error',
      meaning:
        "The broker has no compiled filter for the group's SQL92 subscription (it did not compile, or the heartbeat carrying it has not arrived).",
    },
  ],
  [
    R.FILTER_DATA_NOT_LATEST,
    {
      severity: 'warning',
      meaning: "The broker's SQL92 filter of the group is older than the pull's: a heartbeat is on its way.",
    },
  ],
  [
    R.PULL_OFFSET_MOVED,
    {
      severity: 'warning',
      meaning:
        'The pull offset is outside the queue (below its min offset after old files were deleted, or beyond its max after a broker lost data or the offset was set by hand): the consumer jumps to nextBeginOffset, skipping messages or consuming some again.',
    },
  ],
  [
    R.SYSTEM_ERROR,
    {
      severity: 'error',
      meaning:
        'The broker failed the request (the remark says why: an undecodable header, a store error, a feature it lacks).',
    },
  ],
  [
    R.SERVICE_NOT_AVAILABLE,
    {
      severity: 'error',
      meaning:
        'The broker cannot store or serve right now: it is shutting down, a slave asked to write, the disk is full (diskMaxUsedSpaceRatio) or the store is in an error state.',
    },
  ],
  [
    R.MESSAGE_ILLEGAL,
    {
      severity: 'error',
      meaning:
        'The broker refused the message: too large (maxMessageSize, 4 MiB by default), properties too long, or a bad topic name.',
    },
  ],
  [
    R.INVALID_PARAMETER,
    {
      severity: 'error',
      meaning: 'The broker refused a field of the request (the remark names it): a bad name, queue id or value.',
    },
  ],
  [
    R.FLUSH_DISK_TIMEOUT,
    {
      severity: 'warning',
      meaning:
        'The message is stored but a synchronous disk flush did not finish in time: the disk is too slow for SYNC_FLUSH.',
    },
  ],
  [
    R.FLUSH_SLAVE_TIMEOUT,
    {
      severity: 'warning',
      meaning:
        'The message is stored on the master but the slave did not confirm in time (SYNC_MASTER): the slave lags or the network between them is slow.',
    },
  ],
  [
    R.SLAVE_NOT_AVAILABLE,
    {
      severity: 'warning',
      meaning: 'A SYNC_MASTER has no slave to replicate to: the message is stored on the master only.',
    },
  ],
  [
    R.REQUEST_CODE_NOT_SUPPORTED,
    {
      severity: 'warning',
      meaning:
        'The peer does not know this request code: a client feature the broker version lacks (or the other way round).',
    },
  ],
  [R.VERSION_NOT_SUPPORTED, { severity: 'warning', meaning: "The peer refused the client's protocol version." }],
  [
    R.CONSUMER_NOT_ONLINE,
    {
      severity: 'warning',
      meaning: 'The broker found no connected consumer of that group or client id to forward the request to.',
    },
  ],
  [
    R.NOT_LEADER_FOR_QUEUE,
    {
      severity: 'warning',
      meaning: "The broker is not the leader of the queue (static topic / logic queue): the client's route is stale.",
    },
  ],
  [
    R.GO_AWAY,
    { severity: 'warning', meaning: 'The broker is going away (graceful shutdown): the client reconnects elsewhere.' },
  ],
]);

/** Codes that are answers, not failures, to requests the capture did not show: reported only when paired. */
const MAYBE_ANSWERS = new Set<number>([
  R.PULL_NOT_FOUND,
  R.PULL_RETRY_IMMEDIATELY,
  R.QUERY_NOT_FOUND,
  R.NO_MESSAGE,
  R.POLLING_FULL,
  R.POLLING_TIMEOUT,
  R.TRANSACTION_SHOULD_COMMIT,
  R.TRANSACTION_SHOULD_ROLLBACK,
  R.TRANSACTION_STATE_UNKNOW,
]);

/** Is this response a refusal worth reporting? */
function isError(code: number, req: SeenRequestInfo | null): boolean {
  if (code === R.SUCCESS) return false;
  // PULL_OFFSET_MOVED is one of a pull's answers, but an offset out of range is what a user wants to hear about.
  if (code === R.PULL_OFFSET_MOVED) return true;
  if (!req) return !MAYBE_ANSWERS.has(code);
  const op = operationOf(req.code);
  if (op?.answers.includes(code)) return false;
  if (code === R.TOPIC_NOT_EXIST && req.code === RequestCode.GET_ROUTEINFO_BY_TOPIC) {
    // A new group's %RETRY% topic has no route until the broker registers it after the group's first heartbeat.
    const topic = req.ext?.topic ?? '';
    if (topic.startsWith('%RETRY%')) return false;
  }
  return true;
}

interface Seen {
  req: SeenRequestInfo | null;
  frame: DoctorFrame;
  remark: string | null;
  lastMs: number;
  count: number;
  /** For GET_ROUTEINFO_BY_TOPIC answered TOPIC_NOT_EXIST: the topic. */
  routeOf: string | null;
}

const SENDS = new Set<number>([RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE]);

/** Pull refusals a consumer heals by itself with its next heartbeat (see transientRefusalHealMs). */
const TRANSIENT_PULL_REFUSALS = new Set<number>([R.SUBSCRIPTION_NOT_LATEST, R.FILTER_DATA_NOT_LATEST]);

/** The pull refusals of one consumer, group and queue not yet known to have healed. */
interface RefusalEpisode {
  firstMs: number;
  frames: DoctorFrame[];
}

/** Frames of one episode kept to report it; beyond, it is counted by its first ones only. */
const MAX_EPISODE_FRAMES = 1000;

/** Error responses, by response code and the request code they answer. */
export class ErrorResponseCheck implements DoctorCheck {
  readonly id = 'error-response';
  private readonly seen = new Map<string, Seen>();

  /** Clients that unregistered a group: "src\0group". */
  private readonly unregistered = new Set<string>();
  /** Topics with a route or a stored message in the capture. */
  private readonly topicsFound = new Set<string>();
  /** "src\0group\0topic\0queueId" → refusals that may still heal. */
  private readonly episodes = new Map<string, RefusalEpisode>();

  frame(f: DoctorFrame, ctx: DoctorContext): void {
    const req = f.request;
    if (f.response && req?.code === RequestCode.PULL_MESSAGE) {
      const key = `${req.src}\u0000${req.ext?.consumerGroup ?? ''}\u0000${req.ext?.topic ?? ''}\u0000${req.ext?.queueId ?? ''}`;
      const code = f.frame.cmd.code;
      const episode = this.episodes.get(key);
      if (TRANSIENT_PULL_REFUSALS.has(code)) {
        if (!episode) this.episodes.set(key, { firstMs: f.ms, frames: [f] });
        else if (episode.frames.length < MAX_EPISODE_FRAMES) episode.frames.push(f);
        return;
      }
      if (episode && code !== R.SYSTEM_ERROR) {
        // The consumer pulled normally again: healed in time, or a refusal that lasted.
        this.episodes.delete(key);
        if (f.ms - episode.firstMs > ctx.options.transientRefusalHealMs) for (const e of episode.frames) this.record(e);
      }
    }
    this.record(f);
  }

  private record(f: DoctorFrame): void {
    const cmd = f.frame.cmd;
    if (!f.response) {
      if (cmd.code === RequestCode.UNREGISTER_CLIENT && cmd.extFields?.consumerGroup)
        this.unregistered.add(`${f.frame.src}\u0000${cmd.extFields.consumerGroup}`);
      return;
    }
    if (
      cmd.code === R.SUCCESS &&
      f.request &&
      (f.request.code === RequestCode.GET_ROUTEINFO_BY_TOPIC || SENDS.has(f.request.code))
    ) {
      const topic = requestTopicAndGroup(f.request.code, f.request.ext).topic;
      if (topic !== undefined) this.topicsFound.add(topic);
    }
    if (!isError(cmd.code, f.request)) return;
    // A pull held across its consumer's shutdown is re-run after UNREGISTER_CLIENT removed the
    // group's subscription: SUBSCRIPTION_NOT_EXIST then means only that the consumer left.
    const group = f.request?.ext?.consumerGroup;
    if (
      cmd.code === R.SUBSCRIPTION_NOT_EXIST &&
      group !== undefined &&
      this.unregistered.has(`${f.request!.src}\u0000${group}`)
    )
      return;
    let key = `${cmd.code}\u0000${f.request?.code ?? -1}`;
    // A producer's first route lookup of a topic that sending creates (autoCreateTopicEnable) is
    // answered TOPIC_NOT_EXIST; kept apart per topic, and dropped at the end if the topic showed up.
    const missingRoute = cmd.code === R.TOPIC_NOT_EXIST && f.request?.code === RequestCode.GET_ROUTEINFO_BY_TOPIC;
    if (missingRoute) key += `\u0000${f.request!.ext?.topic ?? ''}`;
    const s = this.seen.get(key);
    if (s) {
      s.count++;
      // Refusals held back as possibly transient are recorded late: keep first and last in time order.
      s.lastMs = Math.max(s.lastMs, f.ms);
      if (f.ms < s.frame.ms) {
        s.frame = f;
        s.req = f.request;
        s.remark = cmd.remark;
      }
    } else
      this.seen.set(key, {
        req: f.request,
        frame: f,
        remark: cmd.remark,
        lastMs: f.ms,
        count: 1,
        routeOf: missingRoute ? (f.request!.ext?.topic ?? '') : null,
      });
  }

  finish(ctx: DoctorContext): Finding[] {
    // Refusals the capture ended on, not seen to heal.
    for (const episode of this.episodes.values()) for (const e of episode.frames) this.record(e);
    this.episodes.clear();
    return [...this.seen.values()]
      .filter((s) => s.routeOf === null || !this.topicsFound.has(s.routeOf))
      .map(({ req, frame, remark, lastMs, count }) => {
        const code = frame.frame.cmd.code;
        const m = MEANINGS.get(code) ?? {
          severity: 'warning' as const,
          meaning: 'The peer refused the request; the remark says why.',
        };
        const q = req ? queueOf(req) : null;
        const { topic, group } = req ? requestTopicAndGroup(req.code, req.ext) : {};
        const about = [topic !== undefined ? `topic ${topic}` : '', group !== undefined ? `group ${group}` : '']
          .filter(Boolean)
          .join(', ');
        const what = req
          ? `${requestCodeName(req.code)} request${count === 1 ? '' : 's'}`
          : `response${count === 1 ? '' : 's'} to requests the capture missed`;
        const remarkText = remark ? `: "${remark.length > 160 ? remark.slice(0, 157) + '...' : remark}"` : '';
        return {
          check: this.id,
          severity: m.severity,
          summary: `${count} ${what} answered ${responseCodeName(code)} (${code})${about ? ` (first: ${about})` : ''}${remarkText}`,
          meaning: m.meaning,
          evidence: defined({
            firstMs: frame.ms,
            lastMs,
            flow:
              req?.flow ??
              (frame.frame.src !== null && frame.frame.dst !== null
                ? `${frame.frame.dst} -> ${frame.frame.src}`
                : undefined),
            opaque: frame.frame.cmd.opaque,
            queue: q ? ctx.queueLabel(q) : undefined,
            group,
            code,
            count,
          }),
        };
      });
  }
}
