import type { Clock } from '../../clock.js';

/** Requests remembered at once (maxPendingReplyRequests); past it the oldest is forgotten. */
export const DEFAULT_MAX_PENDING_REPLY_REQUESTS = 65_536;
/** A request without a readable TTL property is remembered this long (Java's request() always sends one). */
export const DEFAULT_REPLY_REQUEST_TTL_MS = 60_000;
/** The longest a request is remembered, whatever its TTL says. */
export const MAX_REPLY_REQUEST_TTL_MS = 24 * 3600_000;

/** What a reply's CORRELATION_ID and REPLY_TO_CLIENT say against the requests the broker stored. */
export type ReplyCheck = { ok: true } | { ok: false; remark: string };

interface Pending {
  readonly clientId: string;
  readonly expiresAt: number;
}

/**
 * The requests the brokers of one process stored (a message sent with CORRELATION_ID and
 * REPLY_TO_CLIENT, as producer.request() sends it), each remembered for its TTL: a reply
 * (SEND_REPLY_MESSAGE) is pushed only to the client its request named, only while that request
 * waits, and only once. Apache pushes any reply to whichever client REPLY_TO_CLIENT names (the ids
 * are listed by GET_CONSUMER_LIST_BY_GROUP), so any client that may send to the reply topic could
 * push a forged reply to any requester.
 *
 * Bounded: at most `maxEntries` requests; expired ones are dropped as new ones come, and past the
 * bound the oldest is forgotten (its reply is then refused, which the requester sees as a timeout).
 * One table serves every broker `startBroker` starts, so a reply sent to another broker of the
 * cluster than its request still finds it.
 */
export class ReplyRequestTable {
  private readonly pending = new Map<string, Pending>();
  /** Requests forgotten because the table was full, for stats and tests. */
  evicted = 0;

  constructor(
    private readonly clock: Clock,
    readonly maxEntries = DEFAULT_MAX_PENDING_REPLY_REQUESTS,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  /** A stored message's properties: remembered when they make it a request. */
  rememberRequest(properties: Readonly<Record<string, string>>): void {
    const correlationId = properties.CORRELATION_ID;
    const clientId = properties.REPLY_TO_CLIENT;
    // a reply carries both too (MSG_TYPE reply); it is not a request
    if (correlationId === undefined || clientId === undefined || properties.MSG_TYPE === 'reply') return;
    const ttlText = properties.TTL;
    const ttl =
      ttlText !== undefined && /^\d{1,15}$/.test(ttlText)
        ? Math.min(Number(ttlText), MAX_REPLY_REQUEST_TTL_MS)
        : DEFAULT_REPLY_REQUEST_TTL_MS;
    const now = this.clock.now();
    this.pending.delete(correlationId);
    this.pending.set(correlationId, { clientId, expiresAt: now + ttl });
    // the oldest goes first (O(1) per request; expired ones that are not oldest wait their turn)
    while (this.pending.size > this.maxEntries) {
      const [oldest, p] = this.pending.entries().next().value!;
      this.pending.delete(oldest);
      if (p.expiresAt >= now) this.evicted++;
    }
  }

  /** Whether a reply with these properties answers a waiting request of the client it names. */
  check(properties: Readonly<Record<string, string>>): ReplyCheck {
    const correlationId = properties.CORRELATION_ID;
    const clientId = properties.REPLY_TO_CLIENT ?? '';
    if (correlationId === undefined)
      return { ok: false, remark: 'reply message properties[CORRELATION_ID] is null: a reply answers a request' };
    const p = this.pending.get(correlationId);
    if (!p || p.expiresAt < this.clock.now()) {
      if (p) this.pending.delete(correlationId);
      return {
        ok: false,
        remark: `reply refused: no request with CORRELATION_ID ${correlationId} is waiting (never stored, answered already, or past its TTL)`,
      };
    }
    if (p.clientId !== clientId)
      return {
        ok: false,
        remark: `reply refused: the request with CORRELATION_ID ${correlationId} was not sent by client <${clientId}>`,
      };
    return { ok: true };
  }

  /** The request was answered: a second reply to it is refused. */
  answered(correlationId: string): void {
    this.pending.delete(correlationId);
  }
}
