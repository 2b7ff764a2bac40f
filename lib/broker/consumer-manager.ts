import createDebug from '../debug.js';
import type { SubscriptionData } from '../../protocol/index.js';
import type { RemotingConnection } from '../remoting/index.js';
import { ChannelExpiredError } from './errors.js';

const log = createDebug('rocketwire:broker');

/** One client connection registered in a group (ClientChannelInfo). */
export interface ClientChannelInfo {
  conn: RemotingConnection;
  clientId: string;
  language: string | null;
  version: number;
  lastUpdate: number;
}

export class ConsumerGroupInfo {
  readonly groupName: string;
  readonly channels = new Map<RemotingConnection, ClientChannelInfo>();
  readonly subscriptions = new Map<string, SubscriptionData>();
  consumeType = 'CONSUME_PASSIVELY';
  messageModel = 'CLUSTERING';
  consumeFromWhere = 'CONSUME_FROM_LAST_OFFSET';
  /**
   * The fingerprint of the group's last heartbeat (heartbeat V2; 0 for a heartbeat without one),
   * undefined before the first: Java's ClientManageProcessor keeps it per group.
   */
  heartbeatFingerprint: number | undefined = undefined;

  constructor(groupName: string) {
    this.groupName = groupName;
  }

  /** Client ids of the live channels, in registration order. */
  clientIds(): string[] {
    return [...this.channels.values()].map((c) => c.clientId);
  }

  /** True when the channel is new to the group. */
  updateChannel(info: ClientChannelInfo): boolean {
    const old = this.channels.get(info.conn);
    if (!old) {
      this.channels.set(info.conn, info);
      return true;
    }
    if (old.clientId !== info.clientId)
      log(
        'group %s: channel %s changes client id %s → %s',
        this.groupName,
        info.conn.remoteAddress,
        old.clientId,
        info.clientId,
      );
    old.clientId = info.clientId;
    old.language = info.language;
    old.version = info.version;
    old.lastUpdate = info.lastUpdate;
    return false;
  }

  /**
   * ConsumerGroupInfo.updateSubscription: a new topic is added (change), an existing one is replaced
   * only by a greater subVersion (no change), topics missing from the heartbeat are removed (change).
   */
  updateSubscription(subs: SubscriptionData[]): boolean {
    let changed = false;
    const topics = new Set<string>();
    for (const sub of subs) {
      topics.add(sub.topic);
      const old = this.subscriptions.get(sub.topic);
      if (!old) {
        this.subscriptions.set(sub.topic, sub);
        changed = true;
      } else if (sub.subVersion > old.subVersion) {
        this.subscriptions.set(sub.topic, sub);
      }
    }
    for (const topic of [...this.subscriptions.keys()]) {
      if (!topics.has(topic)) {
        this.subscriptions.delete(topic);
        changed = true;
      }
    }
    return changed;
  }
}

/** Called with the group and its remaining channels whenever membership or topics change. */
export type ConsumerIdsChangeListener = (group: string, channels: ClientChannelInfo[]) => void;

/**
 * Consumer groups by name (ConsumerManager). Channels are keyed by connection; a closed connection
 * leaves every group at once, one not refreshed by a heartbeat for `channelExpiredTimeoutMs` is
 * closed and removed by `scanExpired`. Every change notifies the remaining members.
 */
export class ConsumerManager {
  readonly groups = new Map<string, ConsumerGroupInfo>();
  /**
   * HEART_BEATs taken since start: with subscriptions (V1, or V2 in full), V2 ones without them,
   * and the bytes of their bodies (what heartbeat V2 saves shows here).
   */
  readonly heartbeats = { full: 0, withoutSub: 0, bodyBytes: 0 };
  readonly producerGroups = new Map<
    string,
    Map<RemotingConnection, { clientId: string; lastUpdate: number; language: string; version: number }>
  >();
  constructor(
    private readonly onChange: ConsumerIdsChangeListener,
    readonly channelExpiredTimeoutMs = 120_000,
  ) {}

  /** Told when a client registers (the broker arms its expiry scan). */
  onRegister: (() => void) | null = null;

  /** Whether any consumer or producer connection is registered: what the expiry scan looks at. */
  get hasClients(): boolean {
    return this.groups.size > 0 || this.producerGroups.size > 0;
  }

  find(group: string): ConsumerGroupInfo | undefined {
    return this.groups.get(group);
  }

  register(
    group: string,
    channel: ClientChannelInfo,
    consumeType: string,
    messageModel: string,
    consumeFromWhere: string,
    /** null: a V2 heartbeat without subscriptions, which keeps the group's (registerConsumerWithoutSub). */
    subs: SubscriptionData[] | null,
  ): boolean {
    let info = this.groups.get(group);
    if (!info) {
      info = new ConsumerGroupInfo(group);
      this.groups.set(group, info);
    }
    info.consumeType = consumeType;
    info.messageModel = messageModel;
    info.consumeFromWhere = consumeFromWhere;
    const r1 = info.updateChannel(channel);
    this.onRegister?.();
    const r2 = subs !== null && info.updateSubscription(subs);
    if (r1 || r2) this.onChange(group, [...info.channels.values()]);
    return r1 || r2;
  }

  registerProducer(
    group: string,
    conn: RemotingConnection,
    clientId: string,
    now: number,
    client: { language: string; version: number } = { language: 'JAVA', version: 0 },
  ): void {
    let m = this.producerGroups.get(group);
    if (!m) {
      m = new Map();
      this.producerGroups.set(group, m);
    }
    m.set(conn, { clientId, lastUpdate: now, language: client.language, version: client.version });
    this.onRegister?.();
  }

  /** Remove one connection from one group (UNREGISTER_CLIENT); notifies the rest. */
  unregister(group: string, conn: RemotingConnection): void {
    const info = this.groups.get(group);
    if (!info?.channels.delete(conn)) return;
    if (info.channels.size === 0) this.groups.delete(group);
    else this.onChange(group, [...info.channels.values()]);
  }

  unregisterProducer(group: string, conn: RemotingConnection): void {
    const m = this.producerGroups.get(group);
    if (m) {
      m.delete(conn);
      if (m.size === 0) this.producerGroups.delete(group);
    }
  }

  /** A connection went away: remove it from every group. */
  removeConnection(conn: RemotingConnection): void {
    for (const info of [...this.groups.values()]) {
      if (info.channels.has(conn)) this.unregister(info.groupName, conn);
    }
    for (const [g] of [...this.producerGroups]) this.unregisterProducer(g, conn);
  }

  /** Close and remove channels not refreshed within the expiry time. */
  scanExpired(now: number): void {
    for (const info of [...this.groups.values()]) {
      for (const ch of [...info.channels.values()]) {
        if (now - ch.lastUpdate > this.channelExpiredTimeoutMs) {
          log('group %s: channel %s (%s) expired', info.groupName, ch.conn.remoteAddress, ch.clientId);
          this.unregister(info.groupName, ch.conn);
          ch.conn.close(new ChannelExpiredError(info.groupName, ch.clientId, this.channelExpiredTimeoutMs));
        }
      }
    }
    for (const [g, m] of [...this.producerGroups]) {
      for (const [conn, p] of [...m]) if (now - p.lastUpdate > this.channelExpiredTimeoutMs) m.delete(conn);
      if (m.size === 0) this.producerGroups.delete(g);
    }
  }
}
