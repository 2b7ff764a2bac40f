import type { FrameDescription, MessageDescription } from './describe.js';

const str = JSON.stringify;

/**
 * One stored message as JSON, byte for byte what JSON.stringify gives for the same object. Written
 * out by hand because a pull result is mostly base64 bodies: they need no escaping, and Node 20's
 * JSON.stringify scans every character of them for escapes (half the cost of `decode --json`).
 */
function messageJson(m: MessageDescription): string {
  let s =
    `{"topic":${str(m.topic)},"queueId":${m.queueId},"queueOffset":${m.queueOffset},"commitLogOffset":${m.commitLogOffset}` +
    `,"sysFlag":${m.sysFlag},"bornTimestamp":${m.bornTimestamp},"bornHost":${str(m.bornHost)}` +
    `,"storeTimestamp":${m.storeTimestamp},"storeHost":${str(m.storeHost)},"reconsumeTimes":${m.reconsumeTimes}` +
    `,"properties":${str(m.properties)},"msgId":${str(m.msgId)},"offsetMsgId":${str(m.offsetMsgId)}`;
  if (m.bodyBase64 !== undefined) s += `,"bodyBase64":"${m.bodyBase64}"`;
  if (m.bodyLength !== undefined) s += `,"bodyLength":${m.bodyLength}`;
  return s + '}';
}

/** A frame description as one JSON line (without the newline); equal to JSON.stringify(d). */
export function frameJson(d: FrameDescription): string {
  if (!d.messages) return str(d);
  // `messages` is the last key of a description that has it (describeCommand returns right after).
  const { messages, ...rest } = d;
  let s = str(rest).slice(0, -1) + ',"messages":[';
  for (let i = 0; i < messages.length; i++) s += (i > 0 ? ',' : '') + messageJson(messages[i]!);
  return s + ']}';
}
