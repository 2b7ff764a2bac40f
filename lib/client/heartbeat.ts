import createDebug from '../debug.js';
import { Operations, computeHeartbeatFingerprint, type HeartbeatData } from '../../protocol/internal.js';
import type { Clock } from '../clock.js';
import type { RemotingClient } from '../remoting/index.js';
import type { ClientApiContext } from './mq-client-api.js';
import { call, encodeRequestBody } from './operation-call.js';

const log = createDebug('rocketwire:client');

/** What one heartbeat needs of the client instance, and where it records the broker's answer. */
export interface HeartbeatHost {
  readonly remoting: RemotingClient;
  readonly options: { readonly clock: Clock };
  /** Broker address → the `version` its last heartbeat answer carried. */
  readonly brokerVersionTable: Map<string, number>;
  /** Broker address → clock time of its last answered heartbeat (health()). */
  readonly lastHeartbeatAnswer: Map<string, number>;
  /** Heartbeat V2's per-broker state; null when the client sends every heartbeat in full. */
  readonly heartbeatV2: HeartbeatV2State | null;
  readonly heartbeatStats: HeartbeatStats;
}

/** Heartbeats sent by one client instance since it was created. */
export interface HeartbeatStats {
  /** Heartbeats carrying the subscriptions. */
  full: number;
  /** V2 heartbeats without them (the broker kept them from an earlier one). */
  withoutSub: number;
  /** Bytes of the heartbeats' bodies, both kinds. */
  bodyBytes: number;
}

/**
 * One round's heartbeat, encoded once for every broker: the full body and, with heartbeat V2, the
 * body without subscriptions and the fingerprint both carry.
 */
export interface HeartbeatBodies {
  readonly full: Buffer;
  readonly withoutSub: Buffer | null;
  readonly fingerprint: number;
}

/**
 * The bodies of one heartbeat round. With V2 both carry the fingerprint of the full data; the
 * body without subscriptions keeps each group's entry (a broker refreshes the member's channel
 * from it) with an empty subscription set, as Java's prepareHeartbeatData(true).
 */
export function encodeHeartbeatBodies(data: HeartbeatData, v2: boolean): HeartbeatBodies {
  if (!v2) return { full: encodeBody(data), withoutSub: null, fingerprint: 0 };
  const fingerprint = computeHeartbeatFingerprint(data);
  const full = encodeBody({ ...data, heartbeatFingerprint: fingerprint, withoutSub: false });
  const lean: HeartbeatData = {
    ...data,
    consumerDataSet: data.consumerDataSet.map((cd) => ({ ...cd, subscriptionDataSet: [] })),
    heartbeatFingerprint: fingerprint,
    withoutSub: true,
  };
  return { full, withoutSub: encodeBody(lean), fingerprint };
}

function encodeBody(data: HeartbeatData): Buffer {
  // HEART_BEAT's body spec is a codec: it encodes every body it is given
  return encodeRequestBody(Operations.HEART_BEAT, data)!;
}

/**
 * Heartbeat V2 (RocketMQ 5.x, Java's MQClientInstance#sendHeartbeatToBrokerV2): per broker
 * address, whether it said it takes V2 heartbeats (IS_SUPPORT_HEART_BEAT_V2) and the fingerprint
 * it last took in full without answering IS_SUB_CHANGE. While that fingerprint is the current
 * one, the broker gets heartbeats without subscriptions; a changed subscription (a new
 * fingerprint), IS_SUB_CHANGE, a rebalance (a new subVersion the broker must learn before the new
 * queues' pulls) or a new connection sends the full data again.
 */
export class HeartbeatV2State {
  private readonly supportsV2 = new Set<string>();
  private readonly fingerprints = new Map<string, number>();

  /** Whether `addr` may get the heartbeat without subscriptions now. */
  canOmitSubscriptions(addr: string, fingerprint: number): boolean {
    return this.supportsV2.has(addr) && this.fingerprints.get(addr) === fingerprint;
  }

  /** Record the broker's answer to a heartbeat (`full` or not) carrying `fingerprint`. */
  answered(addr: string, fingerprint: number, full: boolean, supportsV2: boolean, subChange: boolean): void {
    if (!full) {
      if (subChange) this.fingerprints.delete(addr);
      return;
    }
    if (!supportsV2) return;
    this.supportsV2.add(addr);
    if (subChange) this.fingerprints.delete(addr);
    else this.fingerprints.set(addr, fingerprint);
  }

  /**
   * Forget what `addr` took: its connection closed, and a broker that restarted has lost its
   * groups. (Java keeps the fingerprint and, after a broker restart, registers the group without
   * subscriptions until something else changes: its pulls then fail with SUBSCRIPTION_NOT_EXIST.)
   */
  forget(addr: string): void {
    this.fingerprints.delete(addr);
  }

  /** A rebalance changed subVersions: every broker gets the full data next. */
  forgetAll(): void {
    this.fingerprints.clear();
  }
}

/**
 * One HEART_BEAT to `addr` with the round's bodies; the error, or null when the broker took it.
 * Without V2 state the full body goes.
 */
export async function sendHeartbeatTo(
  host: HeartbeatHost,
  ctx: ClientApiContext,
  addr: string,
  bodies: HeartbeatBodies,
): Promise<Error | null> {
  const v2 = host.heartbeatV2;
  const lean = v2 !== null && bodies.withoutSub !== null && v2.canOmitSubscriptions(addr, bodies.fingerprint);
  const body = lean ? bodies.withoutSub! : bodies.full;
  try {
    const reply = await call(host.remoting, ctx, addr, Operations.HEART_BEAT, {}, undefined, {
      timeoutMs: ctx.apiTimeoutMs,
      encodedBody: body,
    });
    if (lean) host.heartbeatStats.withoutSub++;
    else host.heartbeatStats.full++;
    host.heartbeatStats.bodyBytes += body.length;
    if (v2 !== null && bodies.withoutSub !== null) {
      const h = reply.header;
      v2.answered(addr, bodies.fingerprint, !lean, h.isSupportHeartBeatV2 === true, h.isSubChange === true);
    }
    host.brokerVersionTable.set(addr, reply.version);
    host.lastHeartbeatAnswer.set(addr, host.options.clock.now());
    return null;
  } catch (err) {
    log('heartbeat to %s failed: %s', addr, (err as Error).message);
    return err as Error;
  }
}

/** The brokers a heartbeat round reached, and those it did not with their errors. */
export interface HeartbeatRoundResult {
  ok: string[];
  failed: { addr: string; error: Error }[];
}

/** One heartbeat to each of `targets` at once; resolves when all have answered or failed. */
export async function heartbeatRound(
  targets: readonly string[],
  send: (addr: string) => Promise<Error | null>,
): Promise<HeartbeatRoundResult> {
  const result: HeartbeatRoundResult = { ok: [], failed: [] };
  await Promise.all(
    targets.map(async (addr) => {
      const error = await send(addr);
      if (error) result.failed.push({ addr, error });
      else result.ok.push(addr);
    }),
  );
  return result;
}
