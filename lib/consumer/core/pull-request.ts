import type { ClockTimer } from '../../clock.js';
import type { FlowControlReason } from './flow-control.js';
import type { MessageQueue } from '../../../protocol/index.js';
import type { ProcessQueue } from './process-queue.js';

/** One held queue's pull state (PullRequest in Java): travels through the pull service's FIFO. */
export interface PullRequest {
  readonly messageQueue: MessageQueue;
  readonly processQueue: ProcessQueue;
  /** Offset the next pull asks for. */
  nextOffset: number;
  /** Orderly: the first pull after locking re-reads the broker's offset. */
  previouslyLocked: boolean;
  /** Broker id the broker suggested for the next pull (0 = master). */
  suggestWhichBrokerId: number;
  /** Pulls parked by flow control, by reason (stats). */
  flowControlPauses: { count: number; size: number; span: number };
  /** Clock time of the first flow-control park of the current run of parks (null when not parked); a run past a minute is logged. */
  flowParkedSinceMs: number | null;
  /** The current run of parks was logged at warn. */
  flowParkWarned: boolean;
  /** Clock time of the last pull the broker answered (any status); null before the first (health()). */
  lastAnsweredAtMs: number | null;
  /** The queue's max offset in the broker's last pull answer; −1 before the first (health()'s lag). */
  brokerMaxOffset: number;
  /** Set while the request sits parked on a timer. */
  parkTimer: ClockTimer | null;
  /**
   * Why the parked request waits, when flow control parked it: a drained cache resumes a request parked
   * for its count or size at once; one parked for the span always waits its 50 ms (see consume-pull.ts).
   */
  parkReason: FlowControlReason | null;
}

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
