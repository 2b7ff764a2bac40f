import type { MessageQueue } from '../../../protocol/index.js';
import type { ProcessQueue, PullRequest } from './process-queue.js';

// The PullRequest type is declared beside ProcessQueue, which holds its queue's request: the two
// refer to each other, and one file keeps that a reference rather than an import cycle.
export type { PullRequest };

/** A new queue's first pull request, bound to its process queue (RebalanceImpl#updateProcessQueueTableInRebalance). */
export function newPullRequest(mq: MessageQueue, pq: ProcessQueue, nextOffset: number): PullRequest {
  const pr: PullRequest = {
    messageQueue: mq,
    processQueue: pq,
    nextOffset,
    previouslyLocked: false,
    suggestWhichBrokerId: 0,
    flowControlPauses: { count: 0, size: 0, span: 0 },
    flowParkedSinceMs: null,
    flowParkWarned: false,
    lastAnsweredAtMs: null,
    brokerMaxOffset: -1,
    parkTimer: null,
    parkReason: null,
  };
  pq.bindPullRequest(pr);
  return pr;
}
