import type { ConsumerBrokerError, ConsumerBrokerRequest, UndecodableMessageError } from '../consumer/index.js';

/** Back-off of the repeated "broker X fails" line: first at once, then after 2 s, 4 s, … 60 s. */
const REPORT_FIRST_BACKOFF_MS = 2000;
const REPORT_MAX_BACKOFF_MS = 60_000;

/** What the command saw of one broker, for its stderr lines and its exit status. */
interface BrokerReport {
  /** A pull of ours was answered by it. */
  pulled: boolean;
  failing: boolean;
  lastError: ConsumerBrokerError | null;
  /** Failures not printed since the last line. */
  unreported: number;
  nextReportAt: number;
  backoffMs: number;
}

/**
 * The consumer's broker and undecodable events as stderr lines: one line per undecodable message;
 * per failing broker one line at once, then again with back-off (naming how many failures came in
 * between), and a line when it answers again. Exported for tests.
 */
export class ConsumeReporter {
  readonly brokers = new Map<string, BrokerReport>();
  skipped = 0;
  constructor(
    private readonly err: NodeJS.WritableStream,
    private readonly now: () => number = Date.now,
  ) {}

  private report(brokerName: string): BrokerReport {
    let r = this.brokers.get(brokerName);
    if (!r) {
      r = {
        pulled: false,
        failing: false,
        lastError: null,
        unreported: 0,
        nextReportAt: 0,
        backoffMs: REPORT_FIRST_BACKOFF_MS,
      };
      this.brokers.set(brokerName, r);
    }
    return r;
  }

  undecodable(e: UndecodableMessageError): void {
    this.skipped++;
    this.err.write(`rocketwire consume: ${e.message}\n`);
  }

  brokerError(e: ConsumerBrokerError): void {
    const r = this.report(e.brokerName);
    r.failing = true;
    r.lastError = e;
    const now = this.now();
    if (now < r.nextReportAt) {
      r.unreported++;
      return;
    }
    const more =
      r.unreported > 0 ? ` (${r.unreported} more failure${r.unreported === 1 ? '' : 's'} since the last report)` : '';
    this.err.write(`rocketwire consume: ${e.message}${more}\n`);
    r.unreported = 0;
    r.nextReportAt = now + r.backoffMs;
    r.backoffMs = Math.min(REPORT_MAX_BACKOFF_MS, r.backoffMs * 2);
  }

  brokerReachable(brokerName: string, addr: string, request: ConsumerBrokerRequest): void {
    const r = this.report(brokerName);
    if (request === 'PULL_MESSAGE') r.pulled = true;
    if (r.failing) this.err.write(`rocketwire consume: broker ${brokerName} (${addr}) answers again\n`);
    r.failing = false;
    r.unreported = 0;
    r.nextReportAt = 0;
    r.backoffMs = REPORT_FIRST_BACKOFF_MS;
  }

  /**
   * Lines for the brokers that are failing now and never answered a pull: those the command
   * stopped without having reached. Empty when there are none.
   */
  neverReached(): string[] {
    const out: string[] = [];
    for (const [name, r] of this.brokers) {
      if (r.pulled || !r.failing || !r.lastError) continue;
      const cause = r.lastError.cause instanceof Error ? r.lastError.cause.message.split('\n')[0] : r.lastError.message;
      out.push(`stopped without reaching broker ${name}${r.lastError.addr ? ` (${r.lastError.addr})` : ''}: ${cause}`);
    }
    return out;
  }
}
