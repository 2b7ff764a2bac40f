import createDebug from '../debug.js';
import { Operations, ResponseCode, type TopicRouteData } from '../../protocol/internal.js';
import { BrokerError } from '../remoting/index.js';
import type { BrokerAddressTable } from './broker-address-table.js';
import type { ResolvedClientOptions } from './client-options.js';
import { TypedEmitter } from '../emitter.js';
import type { LoggerSet } from '../logger.js';
import type { NameServerClient } from './name-server-client.js';
import { readReply } from './operation-call.js';
import { checkTopicRoute } from './topic-route.js';

const log = createDebug('rocketwire:client');

/** Called with a topic's new route whenever a fetch returns something different from the cache. */
export type RouteListener = (topic: string, route: TopicRouteData) => void;

/** What the route table needs of its client instance. */
export interface TopicRouteHost {
  readonly nameServers: NameServerClient;
  readonly brokerAddrTable: BrokerAddressTable;
  readonly options: ResolvedClientOptions;
  readonly logger: Pick<LoggerSet, 'warn'>;
}

/**
 * The client instance's topic routes (Java's topicRouteTable): fetched from the name servers,
 * checked (topic-route.ts), cached, one fetch per topic at a time, listeners told of a change.
 */
export class TopicRouteTable {
  private readonly table = new Map<string, TopicRouteData>();
  private readonly fetches = new Map<string, Promise<TopicRouteData>>();
  /** Route changes (onChange). */
  private readonly events = new TypedEmitter<{ routeChange: [topic: string, route: TopicRouteData] }>();
  /** Name server and topic ("addr\0topic") whose last route was refused (RouteLimitError): logged once. */
  private readonly refused = new Set<string>();

  constructor(private readonly host: TopicRouteHost) {}

  /** The topics of every cached route. */
  topics(): IterableIterator<string> {
    return this.table.keys();
  }

  /** The topics whose cached route lists `addr` among its brokers' addresses (the fast refresh after a broker failure). */
  topicsOfBroker(addr: string): string[] {
    const out: string[] = [];
    for (const [topic, route] of this.table) {
      if (route.brokerDatas.some((b) => Object.values(b.brokerAddrs).includes(addr))) out.push(topic);
    }
    return out;
  }

  /**
   * Drops broker addresses that no cached route mentions any more (Java's cleanOfflineBroker, run
   * before each heartbeat); not while a fetch is under way.
   */
  cleanOfflineBrokers(): void {
    if (this.fetches.size === 0) this.host.brokerAddrTable.cleanOffline(this.table.values());
  }

  /**
   * The topic's route, from the cache unless `refresh` or not cached. A topic the name server does not
   * know raises BrokerError with code TOPIC_NOT_EXIST (17).
   */
  get(topic: string, opts?: { refresh?: boolean }): Promise<TopicRouteData> {
    if (!opts?.refresh) {
      const cached = this.table.get(topic);
      if (cached) return Promise.resolve(cached);
    }
    let p = this.fetches.get(topic);
    if (!p) {
      p = this.fetch(topic).finally(() => this.fetches.delete(topic));
      this.fetches.set(topic, p);
    }
    return p;
  }

  /** The route of `topic` as last fetched, without asking anybody. */
  cached(topic: string): TopicRouteData | undefined {
    return this.table.get(topic);
  }

  /** GET_ROUTEINFO_BY_TOPIC without touching the caches (used for the TBW102 template route). */
  async query(topic: string): Promise<TopicRouteData> {
    const op = Operations.GET_ROUTEINFO_BY_TOPIC;
    const { res, addr } = await this.host.nameServers.request(op, { topic });
    // Errors say "name server" rather than the address, as they always have.
    const route = readReply(op, res, 'name server').body;
    if (route === null) {
      throw new BrokerError(ResponseCode.TOPIC_NOT_EXIST, `empty route for topic ${topic}`, { requestCode: op.code });
    }
    try {
      checkTopicRoute(topic, route, addr, this.host.options);
    } catch (err) {
      // Once per name server and topic until a good route comes: the periodic refresh asks every 30 s.
      const key = `${addr}\u0000${topic}`;
      if (!this.refused.has(key)) {
        this.refused.add(key);
        this.host.logger.warn((err as Error).message);
      }
      throw err;
    }
    this.refused.delete(`${addr}\u0000${topic}`);
    this.host.brokerAddrTable.merge(route);
    return route;
  }

  private async fetch(topic: string): Promise<TopicRouteData> {
    const route = await this.query(topic);
    const old = this.table.get(topic);
    this.table.set(topic, route);
    if (this.events.listening('routeChange') && (!old || JSON.stringify(old) !== JSON.stringify(route)))
      this.events.emit('routeChange', topic, route);
    return route;
  }

  /** Registers a listener for route changes; returns the function that removes it. */
  onChange(listener: RouteListener): () => void {
    // A listener that throws is logged; the route is stored and the other listeners still run.
    return this.events.on('routeChange', (topic, route) => {
      try {
        listener(topic, route);
      } catch (err) {
        log('route listener failed: %s', (err as Error).message);
      }
    });
  }

  /**
   * Records a route learnt elsewhere without notifying listeners: the producer stores the TBW102 template
   * route under an auto-created topic's name, as Java does, so that its brokers get heartbeats and the
   * periodic refresh asks for the topic until the name server knows it.
   */
  set(topic: string, route: TopicRouteData): void {
    this.table.set(topic, route);
    this.host.brokerAddrTable.merge(route);
  }
}
