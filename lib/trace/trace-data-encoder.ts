import type { TraceBean, TraceContext, TraceType } from './trace-types.js';

/**
 * Java's TraceDataEncoder (client/trace/TraceDataEncoder, the same in 5.3.3 and develop): a record
 * is its fields joined by CONTENT_SPLITOR (\u0001) and ended by FIELD_SPLITOR (\u0002); records of
 * one trace message are concatenated. A Java null is written "null" (StringBuilder.append(null)).
 */
export const CONTENT_SPLITOR = '\u0001';
export const FIELD_SPLITOR = '\u0002';

/** What one record becomes (TraceTransferBean): its text and the keys the trace message is indexed by. */
export interface TraceTransferBean {
  transData: string;
  /** The msgId of every bean, then the bean's own keys split at spaces (what queryMsgTraceById looks up). */
  transKey: string[];
}

const S = CONTENT_SPLITOR;
const F = FIELD_SPLITOR;

function text(v: string | null | undefined): string {
  return v === null || v === undefined ? 'null' : v;
}

/** TraceDataEncoder#encoderFromContextBean. */
export function encodeTraceContext(ctx: TraceContext): TraceTransferBean {
  const transKey: string[] = [];
  forEachTraceKey(ctx, (k) => transKey.push(k));
  return { transData: encodeTraceText(ctx), transKey };
}

/** The text of one record (TraceTransferBean#transData), what the dispatcher concatenates. */
export function encodeTraceText(ctx: TraceContext): string {
  let sb = '';
  const beans = ctx.traceBeans;
  switch (ctx.traceType) {
    case 'Pub': {
      const b = beans[0]!;
      sb =
        `Pub${S}${ctx.timeStamp}${S}${text(ctx.regionId)}${S}${ctx.groupName}${S}${b.topic}${S}${text(b.msgId)}${S}${text(b.tags)}${S}${text(b.keys)}${S}` +
        `${text(b.storeHost)}${S}${b.bodyLength}${S}${ctx.costTime}${S}${b.msgType}${S}${text(b.offsetMsgId)}${S}${ctx.success}${F}`;
      break;
    }
    case 'SubBefore':
      for (const b of beans) {
        sb += `SubBefore${S}${ctx.timeStamp}${S}${text(ctx.regionId)}${S}${ctx.groupName}${S}${ctx.requestId}${S}${text(b.msgId)}${S}${b.retryTimes}${S}${text(b.keys)}${F}`;
      }
      break;
    case 'SubAfter':
      for (const b of beans) {
        sb += `SubAfter${S}${ctx.requestId}${S}${text(b.msgId)}${S}${ctx.costTime}${S}${ctx.success}${S}${text(b.keys)}${S}${ctx.contextCode}${S}`;
        // Java compares ctx.getAccessChannel() with CLOUD; a record without one is LOCAL here.
        if (ctx.accessChannel !== 'CLOUD') sb += `${ctx.timeStamp}${S}${ctx.groupName}`;
        sb += F;
      }
      break;
    case 'EndTransaction': {
      const b = beans[0]!;
      sb =
        `EndTransaction${S}${ctx.timeStamp}${S}${text(ctx.regionId)}${S}${ctx.groupName}${S}${b.topic}${S}${text(b.msgId)}${S}${text(b.tags)}${S}${text(b.keys)}${S}` +
        `${text(b.storeHost)}${S}${b.msgType}${S}${text(b.transactionId)}${S}${text(b.transactionState)}${S}${b.fromTransactionCheck === true}${F}`;
      break;
    }
    case 'Recall': {
      const b = beans[0]!;
      sb = `Recall${S}${ctx.timeStamp}${S}${text(ctx.regionId)}${S}${ctx.groupName}${S}${b.topic}${S}${text(b.msgId)}${S}${ctx.success}${F}`;
      break;
    }
  }
  return sb;
}

/** The keys of one record (TraceTransferBean#transKey), in Java's order, without building an array. */
export function forEachTraceKey(ctx: TraceContext, fn: (key: string) => void): void {
  for (const b of ctx.traceBeans) {
    fn(text(b.msgId));
    // Java's String.split(" "): empty pieces between spaces stay, trailing empty ones go.
    if (b.keys !== null && b.keys.length > 0) {
      if (b.keys.indexOf(' ') < 0) fn(b.keys);
      else for (const k of javaSplit(b.keys, ' ')) fn(k);
    }
  }
}

/** Java's String.split(sep) for a one-character separator: trailing empty strings are removed. */
function javaSplit(s: string, sep: string): string[] {
  const parts = s.split(sep);
  while (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  return parts.length === 1 && parts[0] === '' ? [''] : parts;
}

function bean(fields: Partial<TraceBean>): TraceBean {
  return {
    topic: '',
    msgId: '',
    offsetMsgId: '',
    tags: '',
    keys: '',
    storeHost: '',
    bodyLength: 0,
    msgType: 0,
    retryTimes: 0,
    ...fields,
  };
}

function context(traceType: TraceType, fields: Partial<TraceContext>): TraceContext {
  return {
    traceType,
    timeStamp: 0,
    regionId: '',
    groupName: '',
    costTime: 0,
    success: true,
    requestId: '',
    contextCode: 0,
    traceBeans: [],
    ...fields,
  };
}

/** A record that is not one of Java's, or whose numbers do not parse. */
function int(s: string | undefined): number {
  const n = Number(s);
  return Number.isFinite(n) ? n : NaN;
}

/**
 * TraceDataEncoder#decoderFromTraceDataString: the records of one trace message. As in Java,
 * records of an unknown type are skipped, and the older layouts (Pub without offsetMsgId,
 * SubAfter without contextCode or without time and group) are read too.
 * @category Metrics and trace
 */
export function decodeTraceData(data: string): TraceContext[] {
  const out: TraceContext[] = [];
  if (!data) return out;
  for (const rec of data.split(F)) {
    if (rec.length === 0) continue;
    const line = javaSplit(rec, S);
    switch (line[0]) {
      case 'Pub': {
        const b = bean({
          topic: line[4],
          msgId: line[5],
          tags: line[6],
          keys: line[7],
          storeHost: line[8],
          bodyLength: int(line[9]),
          msgType: int(line[11]),
        });
        const ctx = context('Pub', {
          timeStamp: int(line[1]),
          regionId: line[2] ?? null,
          groupName: line[3] ?? '',
          costTime: int(line[10]),
          traceBeans: [b],
        });
        if (line.length === 13) ctx.success = line[12] === 'true';
        else if (line.length >= 14) {
          b.offsetMsgId = line[12] ?? '';
          ctx.success = line[13] === 'true';
        }
        out.push(ctx);
        break;
      }
      case 'SubBefore':
        out.push(
          context('SubBefore', {
            timeStamp: int(line[1]),
            regionId: line[2] ?? null,
            groupName: line[3] ?? '',
            requestId: line[4] ?? '',
            traceBeans: [bean({ msgId: line[5], retryTimes: int(line[6]), keys: line[7] ?? '' })],
          }),
        );
        break;
      case 'SubAfter': {
        const ctx = context('SubAfter', {
          requestId: line[1] ?? '',
          costTime: int(line[3]),
          success: line[4] === 'true',
          traceBeans: [bean({ msgId: line[2], keys: line[5] ?? '' })],
        });
        if (line.length >= 7) ctx.contextCode = int(line[6]);
        if (line.length >= 9) {
          ctx.timeStamp = int(line[7]);
          ctx.groupName = line[8] ?? '';
        }
        out.push(ctx);
        break;
      }
      case 'EndTransaction':
        out.push(
          context('EndTransaction', {
            timeStamp: int(line[1]),
            regionId: line[2] ?? null,
            groupName: line[3] ?? '',
            traceBeans: [
              bean({
                topic: line[4],
                msgId: line[5],
                tags: line[6],
                keys: line[7],
                storeHost: line[8],
                msgType: int(line[9]),
                transactionId: line[10] ?? null,
                transactionState: line[11] ?? '',
                fromTransactionCheck: line[12] === 'true',
              }),
            ],
          }),
        );
        break;
      case 'Recall':
        out.push(
          context('Recall', {
            timeStamp: int(line[1]),
            regionId: line[2] ?? null,
            groupName: line[3] ?? '',
            success: line[6] === 'true',
            traceBeans: [bean({ topic: line[4], msgId: line[5] })],
          }),
        );
        break;
      default:
        break;
    }
  }
  return out;
}
