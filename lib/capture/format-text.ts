import { requestCodeName } from '../../protocol/codes.js';
import type { FrameDescription } from './describe.js';

const MAX_EXT = 240;

/** C0 controls, DEL and the C1 controls (0x9b is a CSI on terminals that take 8-bit controls). */
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;
const HAS_CONTROL = /[\x00-\x1f\x7f-\x9f]/;

/**
 * `s` with every control character written as `\xNN`, as tcpdump and tshark print what a capture
 * holds: topic, group, keys and remark bytes come from whoever sent them, and an escape sequence
 * printed raw would drive the reader's terminal (retitle it, hide lines, rewrite the screen).
 */
export function escapeControl(s: string): string {
  // Almost no string holds one: a test is 3-4 times cheaper than a replace that finds nothing (Node 20).
  if (!HAS_CONTROL.test(s)) return s;
  return s.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * JSON text (JSON.stringify's output) with its `\u00NN` escapes of controls written `\xNN` like
 * escapeControl's, and DEL and the C1 controls, which JSON leaves raw, escaped too. An escaped
 * backslash before "u00" (an even run of backslashes) is text, not an escape, and is left alone.
 */
export function escapeJsonText(json: string): string {
  return escapeControl(
    json.replace(/(\\+)u00([0-9a-f]{2})/g, (m, bs: string, hex: string) =>
      bs.length % 2 === 1 ? `${bs.slice(1)}\\x${hex}` : m,
    ),
  );
}

/** 2026-01-02T03:04:05.123456Z (Date only keeps milliseconds). */
export function formatTimestamp(ts: number): string {
  const sec = Math.floor(ts);
  const micros = Math.round((ts - sec) * 1e6);
  const iso = new Date(sec * 1000).toISOString(); // ...T03:04:05.000Z
  return `${iso.slice(0, 19)}.${String(Math.min(micros, 999999)).padStart(6, '0')}Z`;
}

function extText(ext: Record<string, string>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(ext))
    parts.push(`${escapeControl(k)}=${escapeJsonText(JSON.stringify(v).slice(1, -1))}`);
  const s = parts.join(' ');
  return s.length > MAX_EXT ? s.slice(0, MAX_EXT - 1) + '…' : s;
}

/**
 * One readable line per frame (plus one indented line per stored message), e.g.
 *   2026-01-02T03:04:05.123456Z 10.0.0.5:53412 > 10.0.0.1:10911 REQ PULL_MESSAGE(11) #42 topic=T ... body=0
 *   2026-01-02T03:04:05.125010Z 10.0.0.1:10911 > 10.0.0.5:53412 RSP SUCCESS(0) #42 PULL_MESSAGE 1.564ms "FOUND" ... body=33792 msgs=32
 */
export function formatFrameText(d: FrameDescription): string {
  let s = '';
  if (d.ts !== undefined) s += formatTimestamp(d.ts) + ' ';
  if (d.src !== undefined) s += `${d.src} > ${d.dst} `;
  s += d.kind === 'response' ? 'RSP ' : d.oneway ? 'ONEWAY ' : 'REQ ';
  s += `${d.name}(${d.code}) #${d.opaque}`;
  if (d.requestCode !== undefined) {
    s += ` ${requestCodeName(d.requestCode)}`;
    if (d.latencyMs !== undefined) s += ` ${d.latencyMs.toFixed(3)}ms`;
  }
  if (d.serializeType === 'ROCKETMQ') s += ' [ROCKETMQ]';
  if (d.remark !== null) s += ` ${escapeJsonText(JSON.stringify(d.remark))}`;
  const ext = extText(d.extFields);
  if (ext) s += ' ' + ext;
  s += ` body=${d.bodyLength}`;
  if (d.messages) {
    s += ` msgs=${d.messages.length}`;
    for (const m of d.messages) {
      s +=
        `\n    msg ${escapeControl(m.topic)}:${m.queueId} queueOffset=${m.queueOffset} msgId=${escapeControl(m.msgId)}` +
        ` born=${m.bornHost} store=${m.storeHost} reconsume=${m.reconsumeTimes}` +
        `${m.properties.TAGS !== undefined ? ' tags=' + escapeControl(m.properties.TAGS) : ''}` +
        `${m.properties.KEYS !== undefined ? ' keys=' + escapeControl(m.properties.KEYS) : ''} body=${m.bodyLength ?? Buffer.byteLength(m.bodyBase64 ?? '', 'base64')}`;
    }
  } else if (d.json !== undefined) {
    const j = escapeJsonText(JSON.stringify(d.json));
    s += ' json=' + (j.length > 200 ? j.slice(0, 199) + '…' : j);
  }
  if (d.bodyError !== undefined) s += ` (body not decoded: ${escapeControl(d.bodyError)})`;
  return s;
}
