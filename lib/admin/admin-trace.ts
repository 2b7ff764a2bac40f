import { javaHashMapOrder } from '../../protocol/java-hash.js';
import { decodeTraceData, RMQ_SYS_TRACE_TOPIC } from '../trace/index.js';
import type { FoundMessage } from './admin-types.js';

/**
 * One trace record of a message, as Java's TraceView makes it from a trace message
 * (TraceView.decodeFromTraceTransData): what `mqadmin queryMsgTraceById` prints.
 * @category Admin
 */
export interface MessageTraceView {
  /** Pub, SubBefore, SubAfter, EndTransaction or Recall. */
  type: string;
  /** The traced message's msgId (UNIQ_KEY). */
  msgId: string;
  /** Its topic (Pub records name it; Sub records carry none, so it is empty). */
  topic: string;
  /** Its tags, as the record has them. */
  tags: string | null;
  /** Its keys, space-separated, as the record has them. */
  keys: string | null;
  /** The producer or consumer group that wrote the record. */
  groupName: string;
  /** The host (IP) the trace message was sent from: the traced client's (Java's getBornHostString). */
  clientHost: string;
  /** The broker that stored it (Pub records). */
  storeHost: string | null;
  /** Its offset msgId (Pub records). */
  offsetMsgId: string | null;
  /** When the send began (Pub) or the consumption began (SubBefore) or ended (SubAfter), ms since the epoch. */
  timeStamp: number;
  /** Milliseconds: the send (Pub), or the handler call per message (SubAfter). */
  costTime: number;
  /** success or failed, as the record says. */
  status: 'success' | 'failed';
}

/**
 * Where to look (QueryMsgTraceByIdSubCommand's options and defaults).
 * @category Admin
 */
export interface MessageTraceQuery {
  /**
   * The trace topic (mqadmin -t).
   * @default "RMQ_SYS_TRACE_TOPIC"
   */
  traceTopic?: string | undefined;
  /**
   * Most trace messages per broker (mqadmin -c).
   * @default 64
   */
  maxNum?: number;
  /**
   * Trace messages stored at or after, ms since the epoch (mqadmin -b).
   * @default 0
   */
  beginTimestamp?: number;
  /**
   * Trace messages stored at or before, ms since the epoch (mqadmin -e).
   * @default no bound
   */
  endTimestamp?: number;
}

/**
 * QueryMsgTraceByIdSubCommand: the trace topic's messages whose key is the msgId (each trace message
 * is keyed by the msgIds it traces), decoded; a record counts when its first bean is the message,
 * as TraceView reads it (a record of several messages, a push consumer's batch or a lite-pull poll,
 * is found by its first message only: Java's rule, kept so the two tools agree).
 */
export async function queryMessageTrace(
  byKey: (topic: string, key: string, opts: Omit<MessageTraceQuery, 'traceTopic'>) => Promise<FoundMessage[]>,
  msgId: string,
  q: MessageTraceQuery = {},
): Promise<MessageTraceView[]> {
  const found = await byKey(q.traceTopic ?? RMQ_SYS_TRACE_TOPIC, msgId, {
    maxNum: q.maxNum ?? 64,
    beginTimestamp: q.beginTimestamp ?? 0,
    ...(q.endTimestamp !== undefined ? { endTimestamp: q.endTimestamp } : {}),
  });
  const out: MessageTraceView[] = [];
  for (const { message } of found) {
    const body = message.body.toString('utf8');
    if (body.length === 0) continue;
    for (const ctx of decodeTraceData(body)) {
      const bean = ctx.traceBeans[0];
      if (!bean || bean.msgId !== msgId) continue;
      out.push({
        type: ctx.traceType,
        msgId: bean.msgId,
        topic: bean.topic,
        tags: bean.tags,
        keys: bean.keys,
        groupName: ctx.groupName,
        clientHost: hostOnly(message.bornHost),
        storeHost: bean.storeHost,
        offsetMsgId: bean.offsetMsgId,
        timeStamp: ctx.timeStamp,
        costTime: ctx.costTime,
        status: ctx.success ? 'success' : 'failed',
      });
    }
  }
  return out;
}

function hostOnly(addr: string): string {
  const i = addr.lastIndexOf(':');
  const host = i > 0 ? addr.slice(0, i) : addr;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

const pad = (s: string, n: number): string => s.padEnd(n);
const row = (cells: string[]): string =>
  `${pad(cells[0]!, 10)} ${pad(cells[1]!, 20)} ${pad(cells[2]!, 20)} ${pad(cells[3]!, 20)} ${pad(cells[4]!, 10)} ${pad(cells[5]!, 10)}\n`;

/** DateFormatUtils.format(ts, "yyyy-MM-dd HH:mm:ss") in the process's time zone, as mqadmin prints it in the JVM's. */
export function formatTraceTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * printMessageTrace of QueryMsgTraceByIdSubCommand, column for column: a block per Pub record,
 * then the SubAfter records grouped by consumer group, the groups in the order of Java's HashMap
 * (16 buckets, as `new HashMap<>(16)`), each record as it was found.
 */
export function formatMessageTrace(views: readonly MessageTraceView[]): string {
  let out = '';
  const byGroup = new Map<string, MessageTraceView[]>();
  for (const v of views) {
    if (v.type === 'Pub') {
      out += row(['#Type', '#ProducerGroup', '#ClientHost', '#SendTime', '#CostTimes', '#Status']);
      out += row(['Pub', v.groupName, v.clientHost, formatTraceTime(v.timeStamp), `${v.costTime}ms`, v.status]);
      out += '\n';
    }
    if (v.type === 'SubAfter') {
      const list = byGroup.get(v.groupName);
      if (list) list.push(v);
      else byGroup.set(v.groupName, [v]);
    }
  }
  for (const group of javaHashMapOrder([...byGroup.keys()], 16)) {
    out += row(['#Type', '#ConsumerGroup', '#ClientHost', '#ConsumerTime', '#CostTimes', '#Status']);
    for (const v of byGroup.get(group)!)
      out += row(['Sub', v.groupName, v.clientHost, formatTraceTime(v.timeStamp), `${v.costTime}ms`, v.status]);
    out += '\n';
  }
  return out;
}
