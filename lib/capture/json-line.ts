import type { MessageExt, RemotingCommand } from '../../protocol/index.js';
import {
  describeCommand,
  describeHeader,
  frameMessages,
  type FrameContext,
  type FrameDescription,
  type MessageDescription,
} from './describe.js';
import type { OutputBuffer } from './output-buffer.js';

const str = JSON.stringify;

/** The fields of a stored message that come before its body, in a MessageExt or a MessageDescription. */
type MessageHead = Pick<
  MessageDescription,
  | 'topic'
  | 'queueId'
  | 'queueOffset'
  | 'commitLogOffset'
  | 'sysFlag'
  | 'bornTimestamp'
  | 'bornHost'
  | 'storeTimestamp'
  | 'storeHost'
  | 'reconsumeTimes'
  | 'properties'
  | 'msgId'
  | 'offsetMsgId'
>;

// What JSON.stringify escapes in a string: '"', '\\', C0 controls, and lone surrogates (ES2019); a
// string with any surrogate at all is left to JSON.stringify, which tells lone ones from pairs.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify(s) for a string; the regular test is about 2.5 times cheaper than the call (Node 20). */
function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? str(s) : '"' + s + '"';
}

/** JSON.stringify(n) for a number. */
export function jsonNumber(n: number): string {
  if ((n | 0) === n) return '' + n; // an int32: V8's small-integer path
  if (!Number.isFinite(n)) return 'null';
  if (!(n > 0 && n <= Number.MAX_SAFE_INTEGER) || !Number.isInteger(n)) return '' + n;
  // Above 2^31 (timestamps, commit-log offsets) String(n) takes V8's double-to-string path, four
  // times slower than printing two int32 halves; the halves are exact below 2^53.
  let hi = Math.floor(n / 1e9);
  let lo = n - hi * 1e9;
  if (lo < 0) {
    hi--;
    lo += 1e9;
  } else if (lo >= 1e9) {
    hi++;
    lo -= 1e9;
  }
  if (hi === 0) return '' + lo;
  const low = '' + lo;
  return hi + '000000000'.slice(low.length) + low;
}

/**
 * JSON texts of the strings a pull's messages share (topic, hosts: the message decoder hands out
 * the same string objects for a whole body), remembered by identity for one frame.
 */
interface SharedStrings {
  topic: string;
  topicJson: string;
  born: string;
  bornJson: string;
  store: string;
  storeJson: string;
}

function sharedStrings(): SharedStrings {
  return { topic: '', topicJson: '""', born: '', bornJson: '""', store: '', storeJson: '""' };
}

/** JSON.stringify(properties): values (and names) are strings; keys in the same order (Object.keys'). */
function propertiesJson(props: Record<string, string>): string {
  let s = '{';
  const keys = Object.keys(props);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    s += (i > 0 ? ',' : '') + jsonString(k) + ':' + jsonString(props[k]!);
  }
  return s + '}';
}

/** A stored message's JSON up to its body: `{"topic":…,"offsetMsgId":"…"` (no closing brace). */
function messageHeadJson(m: MessageHead, c: SharedStrings): string {
  if (m.topic !== c.topic) {
    c.topic = m.topic;
    c.topicJson = jsonString(m.topic);
  }
  if (m.bornHost !== c.born) {
    c.born = m.bornHost;
    c.bornJson = jsonString(m.bornHost);
  }
  if (m.storeHost !== c.store) {
    c.store = m.storeHost;
    c.storeJson = jsonString(m.storeHost);
  }
  const offsetMsgId = jsonString(m.offsetMsgId);
  return (
    `{"topic":${c.topicJson},"queueId":${jsonNumber(m.queueId)},"queueOffset":${jsonNumber(m.queueOffset)}` +
    `,"commitLogOffset":${jsonNumber(m.commitLogOffset)},"sysFlag":${jsonNumber(m.sysFlag)}` +
    `,"bornTimestamp":${jsonNumber(m.bornTimestamp)},"bornHost":${c.bornJson}` +
    `,"storeTimestamp":${jsonNumber(m.storeTimestamp)},"storeHost":${c.storeJson},"reconsumeTimes":${jsonNumber(m.reconsumeTimes)}` +
    `,"properties":${propertiesJson(m.properties)},"msgId":${m.msgId === m.offsetMsgId ? offsetMsgId : jsonString(m.msgId)}` +
    `,"offsetMsgId":${offsetMsgId}`
  );
}

/**
 * One stored message as JSON, byte for byte what JSON.stringify gives for the same object. Written
 * out by hand because a pull result is mostly base64 bodies: they need no escaping, and Node 20's
 * JSON.stringify scans every character of them for escapes (half the cost of `decode --json`).
 */
function messageJson(m: MessageDescription, c: SharedStrings): string {
  let s = messageHeadJson(m, c);
  if (m.bodyBase64 !== undefined) s += `,"bodyBase64":"${m.bodyBase64}"`;
  if (m.bodyLength !== undefined) s += `,"bodyLength":${m.bodyLength}`;
  return s + '}';
}

/**
 * A frame description as one JSON line (without the newline); equal to JSON.stringify(d).
 * @category Capture
 */
export function frameJson(d: FrameDescription): string {
  if (!d.messages) return str(d);
  // `messages` is the last key of a description that has it (describeCommand returns right after).
  const { messages, ...rest } = d;
  let s = str(rest).slice(0, -1) + ',"messages":[';
  const c = sharedStrings();
  for (let i = 0; i < messages.length; i++) s += (i > 0 ? ',' : '') + messageJson(messages[i]!, c);
  return s + ']}';
}

/**
 * The line `frameJson(describeCommand(cmd, ctx))` and its newline, written into `out` without the
 * description: stored messages go from the decoded MessageExt straight to bytes, each body's base64
 * written on its own (one flat string, copied as is) instead of inside a line of thousands of pieces.
 */
export function writeFrameJson(out: OutputBuffer, cmd: RemotingCommand, ctx: FrameContext = {}): void {
  const messages = frameMessages(cmd, ctx);
  if (messages === null) {
    out.text(frameJson(describeCommand(cmd, ctx)) + '\n');
    return;
  }
  let s = str(describeHeader(cmd, ctx)).slice(0, -1) + ',"messages":[';
  const c = sharedStrings();
  for (let i = 0; i < messages.length; i++) {
    const m: MessageExt = messages[i]!;
    out.text(s + (i > 0 ? '"},' : '') + messageHeadJson(m, c) + ',"bodyBase64":"');
    out.ascii(m.body.toString('base64'));
    s = '';
  }
  if (messages.length > 0) out.ascii('"}]}\n');
  else out.text(s + ']}\n');
}
