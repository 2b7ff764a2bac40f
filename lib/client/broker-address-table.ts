import type { TopicRouteData } from '../../protocol/internal.js';

/**
 * brokerName → (broker id → address), merged from every route read (Java's brokerAddrTable): where
 * sends, pulls and heartbeats find a broker's master or the broker a pull suggests.
 */
export class BrokerAddressTable {
  private readonly table = new Map<string, Record<string, string>>();

  /** The brokers of `route`, each with the addresses it lists now. */
  merge(route: TopicRouteData): void {
    for (const b of route.brokerDatas) this.table.set(b.brokerName, { ...b.brokerAddrs });
  }

  /** Every broker address, or only the masters' (id 0), in table order. */
  addresses(mastersOnly: boolean): string[] {
    const out: string[] = [];
    for (const addrs of this.table.values()) {
      for (const [id, addr] of Object.entries(addrs)) if (!mastersOnly || id === '0') out.push(addr);
    }
    return out;
  }

  /** Master address (id 0) of a broker, else any of its addresses. */
  findBrokerAddress(brokerName: string): string | undefined {
    const addrs = this.table.get(brokerName);
    if (!addrs) return undefined;
    return addrs['0'] ?? Object.values(addrs)[0];
  }

  /** Master address only (sends and offset queries go to masters). */
  findBrokerMasterAddress(brokerName: string): string | undefined {
    return this.table.get(brokerName)?.['0'];
  }

  /**
   * Address of broker `brokerId` (a pull's suggestWhichBrokerId), as Java's findBrokerAddressInSubscribe:
   * that id exactly; for a slave id, else the next id (id + 1, the other slave of a group with two);
   * else, unless `onlyThisBroker`, the broker's first address in id order (the master when it is
   * known). `slave` tells the caller to clear FLAG_COMMIT_OFFSET (docs/protocol-facts.md#flags-and-enums).
   */
  findBrokerAddressInSubscribe(
    brokerName: string,
    brokerId: number,
    onlyThisBroker = false,
  ): { addr: string; slave: boolean } | undefined {
    const addrs = this.table.get(brokerName);
    if (!addrs) return undefined;
    const exact = addrs[String(brokerId)];
    if (exact) return { addr: exact, slave: brokerId !== 0 };
    if (brokerId !== 0) {
      const next = addrs[String(brokerId + 1)];
      if (next) return { addr: next, slave: true };
    }
    if (onlyThisBroker) return undefined;
    // Java iterates a HashMap<Long, String>: small ids come out in ascending order, as integer-like keys do here.
    const [id, addr] = Object.entries(addrs)[0] ?? [];
    return addr ? { addr, slave: id !== '0' } : undefined;
  }

  /**
   * Drops broker addresses that no cached route mentions any more (Java's cleanOfflineBroker, run before
   * each heartbeat), so that a broker removed from the cluster stops getting heartbeats.
   */
  cleanOffline(routes: Iterable<TopicRouteData>): void {
    const live = new Set<string>();
    for (const route of routes) {
      for (const b of route.brokerDatas)
        for (const a of Object.values(b.brokerAddrs)) live.add(`${b.brokerName}\u0000${a}`);
    }
    for (const [name, addrs] of this.table) {
      for (const [id, addr] of Object.entries(addrs)) if (!live.has(`${name}\u0000${addr}`)) delete addrs[id];
      if (Object.keys(addrs).length === 0) this.table.delete(name);
    }
  }

  /** A snapshot of brokerName → (id → address). */
  snapshot(): Map<string, Record<string, string>> {
    return new Map([...this.table].map(([k, v]) => [k, { ...v }]));
  }
}
