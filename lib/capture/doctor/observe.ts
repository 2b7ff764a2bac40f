import { isOneway, isResponse, parseFastjson, PullSysFlag, RequestCode } from '../../../protocol/index.js';
import type { DecodedFrame } from '../capture-options.js';
import { requestTopicAndGroup } from '../stats.js';
import type { ResolvedDoctorOptions } from './options.js';

/*
 * What every check sees of a frame: its time in epoch ms, the flow written client first, and for a
 * response the request it answers (paired by the capture decoder, by opaque on the same connection).
 */

/** Requests a broker sends to a client: their flow is still written client first. */
const BROKER_TO_CLIENT = new Set<number>([
  RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
  RequestCode.CHECK_TRANSACTION_STATE,
  RequestCode.RESET_CONSUMER_CLIENT_OFFSET,
  RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT,
  RequestCode.GET_CONSUMER_RUNNING_INFO,
  RequestCode.CONSUME_MESSAGE_DIRECTLY,
  RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT,
]);

export interface SeenRequestInfo {
  code: number;
  ms: number;
  opaque: number;
  /** "client -> broker". */
  flow: string;
  src: string | null;
  dst: string | null;
  ext: Record<string, string> | null;
}

export interface DoctorFrame {
  readonly frame: DecodedFrame;
  /** Capture time in epoch ms (the last known time for frames without one). */
  readonly ms: number;
  readonly response: boolean;
  readonly oneway: boolean;
  /** A request: itself. A response: the request it answers, or null when the capture missed it. */
  readonly request: SeenRequestInfo | null;
  /** A response's latency in ms, when its request was seen. */
  readonly latencyMs: number | null;
}

/** A consumer queue as a group sees it at one broker. */
export interface QueueRef {
  /** group, topic, queueId and broker address: the key checks keep state under. */
  readonly key: string;
  readonly group: string;
  readonly topic: string;
  readonly queueId: number;
  /** The broker's address ('' when the capture has none, as in raw frame files). */
  readonly broker: string;
}

export function int(v: string | undefined): number | null {
  if (v === undefined || !/^-?\d+$/.test(v)) return null;
  return Number(v);
}

export function isPull(code: number): boolean {
  return code === RequestCode.PULL_MESSAGE || code === RequestCode.LITE_PULL_MESSAGE;
}

/** A pull's FLAG_SUSPEND and suspendTimeoutMillis (null when it may not be held). */
export function pullSuspendMs(ext: Record<string, string> | null): number | null {
  const sysFlag = int(ext?.sysFlag) ?? 0;
  if ((sysFlag & PullSysFlag.FLAG_SUSPEND) === 0) return null;
  return Math.max(0, int(ext?.suspendTimeoutMillis) ?? 0);
}

/** The consumer queue a request (pull, offset commit) is about, when it names group, topic and queue id. */
export function queueOf(req: SeenRequestInfo): QueueRef | null {
  const { topic, group } = requestTopicAndGroup(req.code, req.ext);
  const queueId = int(req.ext?.queueId);
  if (topic === undefined || group === undefined || queueId === null) return null;
  const broker = req.dst ?? '';
  return { key: `${group}\u0000${topic}\u0000${queueId}\u0000${broker}`, group, topic, queueId, broker };
}

export function flowOf(src: string | null, dst: string | null, code: number, response: boolean): string | null {
  if (src === null || dst === null) return null;
  // Written client first: a response goes the other way from its request, a broker's request too.
  const reverse = response !== BROKER_TO_CLIENT.has(code);
  return reverse ? `${dst} -> ${src}` : `${src} -> ${dst}`;
}

/**
 * What the checks share: the options, the broker names learned from the capture (pull requests'
 * `bname`, route answers), and the capture's end.
 */
export class DoctorContext {
  private readonly brokerNames = new Map<string, string>();
  firstMs: number | null = null;
  lastMs = 0;
  private extraEndMs = -Infinity;

  constructor(readonly options: ResolvedDoctorOptions) {}

  /** "topic/brokerName/queueId" of a queue. */
  queueLabel(q: QueueRef): string {
    return `${q.topic}/${this.brokerNames.get(q.broker) ?? ''}/${q.queueId}`;
  }

  /** The end of the capture: the last frame's time, or the given end when later. */
  get endMs(): number {
    return Math.max(this.lastMs, this.options.endMs ?? -Infinity, this.extraEndMs);
  }

  endAtLeast(ms: number): void {
    this.extraEndMs = Math.max(this.extraEndMs, ms);
  }

  learn(f: DoctorFrame): void {
    const cmd = f.frame.cmd;
    if (!f.response) {
      const bname = cmd.extFields?.bname;
      if (bname && f.frame.dst !== null && !BROKER_TO_CLIENT.has(cmd.code)) this.brokerNames.set(f.frame.dst, bname);
      return;
    }
    if (f.request?.code !== RequestCode.GET_ROUTEINFO_BY_TOPIC || cmd.code !== 0 || !cmd.body || cmd.body.length === 0)
      return;
    try {
      const route = parseFastjson(cmd.body.toString('utf8')) as {
        brokerDatas?: { brokerName?: unknown; brokerAddrs?: Record<string, unknown> }[];
      };
      for (const bd of route.brokerDatas ?? []) {
        if (typeof bd.brokerName !== 'string' || !bd.brokerAddrs) continue;
        for (const addr of Object.values(bd.brokerAddrs))
          if (typeof addr === 'string' && !this.brokerNames.has(addr)) this.brokerNames.set(addr, bd.brokerName);
      }
    } catch {
      // not a route after all: names stay unknown
    }
  }
}

/** Turns decoded frames into DoctorFrames and keeps the requests still waiting for an answer. */
export class Pairing {
  private readonly pending = new Map<string, SeenRequestInfo>();
  private lastMs = 0;

  constructor(private readonly maxPending = 65536) {}

  see(frame: DecodedFrame): DoctorFrame {
    const cmd = frame.cmd;
    const ms = frame.ts === null ? this.lastMs : frame.ts * 1000;
    this.lastMs = Math.max(this.lastMs, ms);
    const response = isResponse(cmd);
    if (!response) {
      const req: SeenRequestInfo = {
        code: cmd.code,
        ms,
        opaque: cmd.opaque,
        flow: flowOf(frame.src, frame.dst, cmd.code, false) ?? '',
        src: frame.src,
        dst: frame.dst,
        ext: cmd.extFields,
      };
      const oneway = isOneway(cmd);
      if (!oneway) {
        if (this.pending.size >= this.maxPending) this.pending.delete(this.pending.keys().next().value as string);
        this.pending.set(`${frame.src}>${frame.dst}#${cmd.opaque}`, req);
      }
      return { frame, ms, response: false, oneway, request: req, latencyMs: null };
    }
    const key = `${frame.dst}>${frame.src}#${cmd.opaque}`;
    let req = this.pending.get(key) ?? null;
    if (req) this.pending.delete(key);
    else if (frame.request) {
      // Paired by the decoder though we lost it (over maxPending): rebuild what it remembers.
      const r = frame.request;
      req = {
        code: r.code,
        ms: r.ts === null ? ms : r.ts * 1000,
        opaque: cmd.opaque,
        flow: flowOf(frame.src, frame.dst, r.code, true) ?? '',
        src: frame.dst,
        dst: frame.src,
        ext: r.extFields,
      };
    }
    return { frame, ms, response: true, oneway: false, request: req, latencyMs: req ? ms - req.ms : null };
  }

  /** Requests not answered by the end, oldest first. */
  unanswered(): SeenRequestInfo[] {
    return [...this.pending.values()].sort((a, b) => a.ms - b.ms);
  }
}
