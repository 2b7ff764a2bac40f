import { PullSysFlag, RequestCode } from '../../../protocol/index.js';
import { requestTopicAndGroup } from '../stats.js';
import { int, isPull, queueOf, type DoctorFrame, type QueueRef } from './observe.js';

/*
 * Offsets as the capture shows them, for the lag and offset checks: commits (piggybacked on a pull
 * with FLAG_COMMIT_OFFSET, or UPDATE_CONSUMER_OFFSET) and what a queue is known to hold (the
 * maxOffset of pull answers, GET_MAX_OFFSET answers, and the queue offset of each send).
 */

/** An offset commit a request carries, as the broker would store it. */
export function commitOf(f: DoctorFrame): { q: QueueRef; offset: number } | null {
  const req = f.request;
  if (f.response || !req) return null;
  if (isPull(req.code)) {
    const sysFlag = int(req.ext?.sysFlag) ?? 0;
    const offset = int(req.ext?.commitOffset);
    if ((sysFlag & PullSysFlag.FLAG_COMMIT_OFFSET) === 0 || offset === null || offset < 0) return null;
    const q = queueOf(req);
    return q ? { q, offset } : null;
  }
  if (req.code === RequestCode.UPDATE_CONSUMER_OFFSET) {
    const offset = int(req.ext?.commitOffset);
    const q = queueOf(req);
    return q && offset !== null && offset >= 0 ? { q, offset } : null;
  }
  return null;
}

const SENDS = new Set<number>([RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE]);

/** A queue's end as an answer shows it: key "topic\0queueId\0broker" and the offset past its last message. */
export function queueEndOf(f: DoctorFrame): { key: string; maxOffset: number } | null {
  const req = f.request;
  const cmd = f.frame.cmd;
  if (!f.response || !req || !cmd.extFields) return null;
  let topic: string | undefined;
  let queueId: number | null;
  let maxOffset: number | null;
  if (isPull(req.code)) {
    topic = requestTopicAndGroup(req.code, req.ext).topic;
    queueId = int(req.ext?.queueId);
    maxOffset = int(cmd.extFields.maxOffset);
  } else if (req.code === RequestCode.GET_MAX_OFFSET && cmd.code === 0) {
    topic = req.ext?.topic;
    queueId = int(req.ext?.queueId);
    maxOffset = int(cmd.extFields.offset);
  } else if (SENDS.has(req.code) && cmd.code === 0) {
    topic = requestTopicAndGroup(req.code, req.ext).topic;
    queueId = int(cmd.extFields.queueId);
    const at = int(cmd.extFields.queueOffset);
    maxOffset = at === null ? null : at + 1;
  } else {
    return null;
  }
  if (topic === undefined || queueId === null || maxOffset === null) return null;
  return { key: queueEndKey(topic, queueId, req.dst ?? ''), maxOffset };
}

export function queueEndKey(topic: string, queueId: number, broker: string): string {
  return `${topic}\u0000${queueId}\u0000${broker}`;
}
