import {
  countStoredRecords,
  isOneway,
  isResponse,
  operationOf,
  PullSysFlag,
  RequestCode,
  requestCodeName,
  ResponseCode,
  responseCodeName,
} from '../../protocol/index.js';
import type { DecodedFrame } from './capture-options.js';
import type { CaptureProblem } from './packet.js';
import { escapeControl } from './format-text.js';

/** Latencies kept per request code for percentiles; beyond this a uniform reservoir sample. */
const MAX_SAMPLES = 100_000;
/** Offset commits kept per queue (the first one and the latest ones). */
const MAX_COMMITS = 200;
const MAX_NAMES = 10_000;
/**
 * Upper edges (ms) of the latency histogram buckets every code keeps next to its samples; a last
 * bucket holds what lies above 30 s. Counted for every response, not sampled, so a histogram's
 * total is the code's latency count. 15-20 s is where Java's long polls (suspend 15 s) land.
 */
export const LATENCY_HISTOGRAM_EDGES_MS: readonly number[] = [
  0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 20_000, 30_000,
];

/** How the push consumer reads a pull response code (PullAPIWrapper.processPullResult). */
export function pullStatus(code: number): string {
  switch (code) {
    case ResponseCode.SUCCESS:
      return 'FOUND';
    case ResponseCode.PULL_NOT_FOUND:
      return 'NO_NEW_MSG';
    case ResponseCode.PULL_RETRY_IMMEDIATELY:
      return 'NO_MATCHED_MSG';
    case ResponseCode.PULL_OFFSET_MOVED:
      return 'OFFSET_ILLEGAL';
    default:
      return responseCodeName(code);
  }
}

class Latencies {
  samples: number[] = [];
  count = 0;
  max = 0;
  readonly histogram: number[] = new Array<number>(LATENCY_HISTOGRAM_EDGES_MS.length + 1).fill(0);
  private seed = 0x2545f491;

  add(ms: number): void {
    this.count++;
    let b = 0;
    while (b < LATENCY_HISTOGRAM_EDGES_MS.length && ms > LATENCY_HISTOGRAM_EDGES_MS[b]!) b++;
    this.histogram[b]!++;
    if (ms > this.max) this.max = ms;
    if (this.samples.length < MAX_SAMPLES) {
      this.samples.push(ms);
      return;
    }
    // Reservoir sampling (deterministic xorshift, so runs are reproducible).
    this.seed ^= this.seed << 13;
    this.seed ^= this.seed >>> 17;
    this.seed ^= this.seed << 5;
    const j = (this.seed >>> 0) % this.count;
    if (j < MAX_SAMPLES) this.samples[j] = ms;
  }

  summary(): { count: number; p50: number; p90: number; p99: number; max: number } | null {
    if (this.count === 0) return null;
    const s = [...this.samples].sort((a, b) => a - b);
    const at = (q: number): number => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
    return {
      count: this.count,
      p50: round3(at(0.5)),
      p90: round3(at(0.9)),
      p99: round3(at(0.99)),
      max: round3(this.max),
    };
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

interface CodeRow {
  requests: number;
  requestBytes: number;
  responses: number;
  responseBytes: number;
  latency: Latencies;
  responseCodes: Map<string, number>;
}

export interface OffsetCommit {
  ts: number | null;
  offset: number;
  /** 'pull' = piggybacked on PULL_MESSAGE (FLAG_COMMIT_OFFSET), 'update' = UPDATE_CONSUMER_OFFSET. */
  via: 'pull' | 'update';
}

interface QueueRow {
  group: string;
  topic: string;
  queueId: number;
  broker: string | null;
  commits: OffsetCommit[];
  commitCount: number;
  /** Commits lower than the one before (offsets going backwards: resets, rebalances). */
  regressions: number;
  pulls: number;
  /** Pull responses seen: pulls - answered at the end = long polls still held (or lost). */
  answered: number;
  pullResults: Map<string, number>;
  pullLatency: Latencies;
  lastPullOffset: number | null;
  lastNextBeginOffset: number | null;
}

function bump(m: Map<string, number>, k: string, n = 1): void {
  if (m.size >= MAX_NAMES && !m.has(k)) return;
  m.set(k, (m.get(k) ?? 0) + n);
}

function int(v: string | undefined): number | null {
  if (v === undefined || !/^-?\d+$/.test(v)) return null;
  return Number(v);
}

/**
 * The topic and group a request names, whatever header type it uses: the keys come from the
 * request codec of the code's row in the operation table (SEND_MESSAGE_V2's "b" and "a"), the
 * usual keys for a code the table does not know. Read as they are, never decoded: a capture may
 * hold anything.
 */
export function requestTopicAndGroup(
  code: number,
  ext: Record<string, string> | null,
): { topic?: string; group?: string } {
  if (!ext) return {};
  const k = operationOf(code)?.request.keys as Readonly<Record<string, string | undefined>> | undefined;
  const topic = ext[k?.topic ?? 'topic'];
  const group =
    ext[k?.consumerGroup ?? 'consumerGroup'] ?? ext[k?.producerGroup ?? 'producerGroup'] ?? ext[k?.group ?? 'group'];
  return { ...(topic !== undefined ? { topic } : {}), ...(group !== undefined ? { group } : {}) };
}

/**
 * What `rocketwire decode --stats` reports: per request code counts, bytes and latency
 * percentiles; pull results by status; topics and groups; and per consumer group and queue the
 * offset commits over time and the pulls, so one can see whether offsets advance and whether long
 * polls come back.
 */
export class DecodeStats {
  private readonly codes = new Map<number, CodeRow>();
  private readonly pullResults = new Map<string, number>();
  private readonly topics = new Map<string, number>();
  private readonly groups = new Map<string, number>();
  private readonly queues = new Map<string, QueueRow>();
  frames = 0;
  requests = 0;
  responses = 0;
  unpairedResponses = 0;
  onewayRequests = 0;
  bytes = 0;
  firstTs: number | null = null;
  lastTs: number | null = null;
  /** Problems that lost data, and of them frames cut short and drops at the decoder's memory bound. */
  lostProblems = 0;
  incompleteFrames = 0;
  bufferLimitDrops = 0;
  /** Flows the decoder evicted because more than its maxFlows were open. */
  flowsEvicted = 0;

  /** A problem the decoder reported (pass every one: only those that lost data are counted). */
  addProblem(p: CaptureProblem): void {
    if (!p.lost) return;
    this.lostProblems++;
    if (p.kind === 'incomplete-frame') this.incompleteFrames++;
    else if (p.kind === 'buffer-limit') this.bufferLimitDrops++;
    else if (p.kind === 'flow-evicted') this.flowsEvicted++;
  }

  private row(code: number): CodeRow {
    let r = this.codes.get(code);
    if (!r) {
      r = {
        requests: 0,
        requestBytes: 0,
        responses: 0,
        responseBytes: 0,
        latency: new Latencies(),
        responseCodes: new Map(),
      };
      this.codes.set(code, r);
    }
    return r;
  }

  private queue(group: string, topic: string, queueId: number, broker: string | null): QueueRow {
    const key = `${group}\u0000${topic}\u0000${queueId}\u0000${broker ?? ''}`;
    let q = this.queues.get(key);
    if (!q) {
      q = {
        group,
        topic,
        queueId,
        broker,
        commits: [],
        commitCount: 0,
        regressions: 0,
        pulls: 0,
        answered: 0,
        pullResults: new Map(),
        pullLatency: new Latencies(),
        lastPullOffset: null,
        lastNextBeginOffset: null,
      };
      this.queues.set(key, q);
    }
    return q;
  }

  private commit(q: QueueRow, c: OffsetCommit): void {
    const last = q.commits[q.commits.length - 1];
    if (last && c.offset < last.offset) q.regressions++;
    q.commitCount++;
    q.commits.push(c);
    // Keep the first commit and the latest ones.
    if (q.commits.length > MAX_COMMITS) q.commits.splice(1, 1);
  }

  /** Messages' topics of a FOUND pull, when the caller decoded them. */
  addTopics(topics: Iterable<string>): void {
    for (const t of topics) bump(this.topics, t, 0);
  }

  add(f: DecodedFrame): void {
    const cmd = f.cmd;
    this.frames++;
    this.bytes += f.frameLength;
    if (f.ts !== null) {
      if (this.firstTs === null || f.ts < this.firstTs) this.firstTs = f.ts;
      if (this.lastTs === null || f.ts > this.lastTs) this.lastTs = f.ts;
    }
    if (!isResponse(cmd)) {
      this.requests++;
      if (isOneway(cmd)) this.onewayRequests++;
      const r = this.row(cmd.code);
      r.requests++;
      r.requestBytes += f.frameLength;
      const { topic, group } = requestTopicAndGroup(cmd.code, cmd.extFields);
      if (topic !== undefined) bump(this.topics, topic);
      if (group !== undefined) bump(this.groups, group);
      const ext = cmd.extFields;
      if (!ext || group === undefined || topic === undefined) return;
      const queueId = int(ext.queueId);
      if (queueId === null) return;
      if (cmd.code === RequestCode.PULL_MESSAGE || cmd.code === RequestCode.LITE_PULL_MESSAGE) {
        const q = this.queue(group, topic, queueId, f.dst);
        q.pulls++;
        q.lastPullOffset = int(ext.queueOffset);
        const sysFlag = int(ext.sysFlag) ?? 0;
        const commitOffset = int(ext.commitOffset);
        if ((sysFlag & PullSysFlag.FLAG_COMMIT_OFFSET) !== 0 && commitOffset !== null && commitOffset >= 0) {
          this.commit(q, { ts: f.ts, offset: commitOffset, via: 'pull' });
        }
      } else if (cmd.code === RequestCode.UPDATE_CONSUMER_OFFSET) {
        const commitOffset = int(ext.commitOffset);
        if (commitOffset !== null)
          this.commit(this.queue(group, topic, queueId, f.dst), { ts: f.ts, offset: commitOffset, via: 'update' });
      }
      return;
    }
    this.responses++;
    const req = f.request;
    if (!req) {
      this.unpairedResponses++;
      return;
    }
    const r = this.row(req.code);
    r.responses++;
    r.responseBytes += f.frameLength;
    bump(r.responseCodes, responseCodeName(cmd.code));
    const latency = req.ts !== null && f.ts !== null ? (f.ts - req.ts) * 1000 : null;
    if (latency !== null) r.latency.add(latency);
    if (req.code === RequestCode.PULL_MESSAGE || req.code === RequestCode.LITE_PULL_MESSAGE) {
      const status = pullStatus(cmd.code);
      bump(this.pullResults, status);
      const { topic, group } = requestTopicAndGroup(req.code, req.extFields);
      const queueId = int(req.extFields?.queueId);
      if (topic !== undefined && group !== undefined && queueId !== null) {
        const q = this.queue(group, topic, queueId, req.dst);
        bump(q.pullResults, status);
        q.answered++;
        if (latency !== null) q.pullLatency.add(latency);
        const next = int(cmd.extFields?.nextBeginOffset);
        if (next !== null) q.lastNextBeginOffset = next;
        if (status === 'FOUND') bump(q.pullResults, 'messages', countStoredRecords(cmd.body));
      }
    }
  }

  /**
   * Response latencies of one request code as counts per bucket of LATENCY_HISTOGRAM_EDGES_MS
   * (one more bucket than edges: above the last), or null when no response of it was timed.
   */
  latencyHistogram(code: number): number[] | null {
    const r = this.codes.get(code);
    return r && r.latency.count > 0 ? [...r.latency.histogram] : null;
  }

  toJSON(): Record<string, unknown> {
    const byCode: Record<string, unknown> = {};
    for (const [code, r] of [...this.codes.entries()].sort((a, b) => a[0] - b[0])) {
      byCode[requestCodeName(code)] = {
        code,
        requests: r.requests,
        requestBytes: r.requestBytes,
        responses: r.responses,
        responseBytes: r.responseBytes,
        responseCodes: Object.fromEntries(r.responseCodes),
        latencyMs: r.latency.summary(),
      };
    }
    const sorted = (m: Map<string, number>): Record<string, number> =>
      Object.fromEntries([...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
    const queues = [...this.queues.values()]
      .sort((a, b) =>
        a.group + a.topic < b.group + b.topic ? -1 : a.group + a.topic > b.group + b.topic ? 1 : a.queueId - b.queueId,
      )
      .map((q) => {
        const pullLatency = q.pullLatency.summary();
        return {
          group: q.group,
          topic: q.topic,
          queueId: q.queueId,
          broker: q.broker,
          pulls: q.pulls,
          unanswered: Math.max(0, q.pulls - q.answered),
          pullResults: Object.fromEntries(q.pullResults),
          pullLatencyMs: pullLatency,
          lastPullOffset: q.lastPullOffset,
          lastNextBeginOffset: q.lastNextBeginOffset,
          commitCount: q.commitCount,
          firstCommit: q.commits[0]?.offset ?? null,
          lastCommit: q.commits[q.commits.length - 1]?.offset ?? null,
          advancing: q.commits.length >= 2 ? q.commits[q.commits.length - 1]!.offset > q.commits[0]!.offset : null,
          regressions: q.regressions,
          commits: q.commits,
        };
      });
    return {
      frames: this.frames,
      requests: this.requests,
      onewayRequests: this.onewayRequests,
      responses: this.responses,
      unpairedResponses: this.unpairedResponses,
      bytes: this.bytes,
      firstTs: this.firstTs,
      lastTs: this.lastTs,
      byCode,
      pullResults: sorted(this.pullResults),
      topics: Object.keys(sorted(this.topics)),
      groups: Object.keys(sorted(this.groups)),
      queues,
      // flowsEvicted only when some were: the statistics of a capture within the bounds stay as they were.
      problems: {
        lost: this.lostProblems,
        incompleteFrames: this.incompleteFrames,
        bufferLimitDrops: this.bufferLimitDrops,
        ...(this.flowsEvicted > 0 ? { flowsEvicted: this.flowsEvicted } : {}),
      },
    };
  }

  /** A readable report. */
  toText(): string {
    const j = this.toJSON() as {
      frames: number;
      requests: number;
      responses: number;
      unpairedResponses: number;
      bytes: number;
      byCode: Record<
        string,
        {
          code: number;
          requests: number;
          requestBytes: number;
          responses: number;
          responseBytes: number;
          latencyMs: ReturnType<Latencies['summary']>;
        }
      >;
      pullResults: Record<string, number>;
      topics: string[];
      groups: string[];
      queues: Array<{
        group: string;
        topic: string;
        queueId: number;
        broker: string | null;
        pulls: number;
        unanswered: number;
        pullResults: Record<string, number>;
        pullLatencyMs: ReturnType<Latencies['summary']>;
        commitCount: number;
        firstCommit: number | null;
        lastCommit: number | null;
        regressions: number;
        commits: OffsetCommit[];
      }>;
    };
    const lines: string[] = [];
    lines.push(
      `frames ${j.frames} (${j.requests} requests, ${j.responses} responses, ${j.unpairedResponses} unpaired), ${j.bytes} bytes`,
    );
    lines.push('');
    lines.push(
      'request code'.padEnd(34) +
        'count'.padStart(8) +
        'req bytes'.padStart(12) +
        'resp bytes'.padStart(12) +
        'p50 ms'.padStart(10) +
        'p90 ms'.padStart(10) +
        'p99 ms'.padStart(10) +
        'max ms'.padStart(10),
    );
    for (const [name, r] of Object.entries(j.byCode)) {
      const l = r.latencyMs;
      const f = (x: number | undefined): string => (x === undefined ? '-' : x.toFixed(3)).padStart(10);
      lines.push(
        `${name}(${r.code})`.padEnd(34) +
          String(r.requests).padStart(8) +
          String(r.requestBytes).padStart(12) +
          String(r.responseBytes).padStart(12) +
          f(l?.p50) +
          f(l?.p90) +
          f(l?.p99) +
          f(l?.max),
      );
    }
    if (Object.keys(j.pullResults).length > 0) {
      lines.push(
        '',
        'pull results: ' +
          Object.entries(j.pullResults)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
      );
    }
    // Topic and group bytes are the capture's: controls escaped, as formatFrameText does.
    lines.push(
      '',
      `topics: ${j.topics.map(escapeControl).join(', ') || '-'}`,
      `groups: ${j.groups.map(escapeControl).join(', ') || '-'}`,
    );
    if (this.lostProblems > 0) {
      const evicted = this.flowsEvicted > 0 ? `, ${this.flowsEvicted} flows evicted past maxFlows` : '';
      lines.push(
        `problems: ${this.lostProblems} lost (${this.incompleteFrames} incomplete frames, ${this.bufferLimitDrops} dropped at the memory bound${evicted})`,
      );
    }
    if (j.queues.length > 0) {
      lines.push('', 'consumer queues:');
      for (const q of j.queues) {
        const results = Object.entries(q.pullResults)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ');
        const lat = q.pullLatencyMs
          ? `, pull latency p50 ${q.pullLatencyMs.p50.toFixed(1)} ms max ${q.pullLatencyMs.max.toFixed(1)} ms`
          : '';
        const held = q.unanswered > 0 ? `, ${q.unanswered} unanswered at the end` : '';
        lines.push(
          `  ${escapeControl(q.group)} ${escapeControl(q.topic)}:${q.queueId}${q.broker ? ' @' + escapeControl(q.broker) : ''}: ${q.pulls} pulls (${results || 'no responses'})${held}${lat}`,
        );
        if (q.commitCount > 0) {
          const trail = q.commits
            .slice(-8)
            .map((c) => `${c.offset}${c.via === 'update' ? 'u' : ''}`)
            .join(' → ');
          lines.push(
            `    offsets committed ${q.commitCount}x: ${q.firstCommit} … ${q.lastCommit}` +
              `${q.regressions ? `, ${q.regressions} went backwards` : ''}; latest: ${trail}`,
          );
        } else {
          lines.push('    no offset commits seen');
        }
      }
    }
    return lines.join('\n') + '\n';
  }
}
