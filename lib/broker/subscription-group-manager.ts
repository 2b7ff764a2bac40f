import * as path from 'node:path';
import createDebug from '../debug.js';
import {
  decodeSubscriptionGroupWrapper,
  encodeSubscriptionGroupWrapper,
  type SubscriptionGroupConfig,
} from '../../protocol/body/admin-tools-bodies.js';
import type { Clock } from '../clock.js';
import { loadConfigFile, stderrWarn, writeFileAtomic, type StoreWarn } from './atomic-file.js';

const log = createDebug('rocketwire:broker');

/**
 * Subscription group configs created by an admin (Java's SubscriptionGroupManager), persisted to
 * `<store>/config/subscriptionGroup.json` (the SubscriptionGroupWrapper JSON, as Java writes it).
 * Java's broker also creates a config on a group's first heartbeat or pull
 * (autoCreateSubscriptionGroup); here a group is known when it has a config, committed offsets or
 * a live consumer (`knownGroups` in AdminToolsProcessor), and the config of one without its own
 * is Java's defaults.
 */
export class SubscriptionGroupManager {
  private readonly file: string;
  private readonly table = new Map<string, SubscriptionGroupConfig>();
  private counter = 0;
  private loaded = false;

  constructor(
    storeDir: string,
    private readonly clock: Clock,
    private readonly warn: StoreWarn = stderrWarn,
  ) {
    this.file = path.join(storeDir, 'config', 'subscriptionGroup.json');
  }

  /** Throws ConfigFileError when the file and its .bak cannot be read (the broker must not start empty over it). */
  load(): void {
    const w = loadConfigFile(this.file, (text) => decodeSubscriptionGroupWrapper(Buffer.from(text, 'utf8')), this.warn);
    if (w) {
      for (const [name, c] of Object.entries(w.subscriptionGroupTable)) this.table.set(name, c);
      this.counter = w.dataVersion?.counter ?? 0;
    }
    this.loaded = true;
  }

  get(group: string): SubscriptionGroupConfig | undefined {
    return this.table.get(group);
  }
  all(): SubscriptionGroupConfig[] {
    return [...this.table.values()];
  }

  put(config: SubscriptionGroupConfig): void {
    this.table.set(config.groupName, config);
    this.persist();
  }

  /** True when the group had a config. */
  delete(group: string): boolean {
    const had = this.table.delete(group);
    if (had) this.persist();
    return had;
  }

  dataVersion(): { timestamp: number; counter: number } {
    return { timestamp: this.clock.now(), counter: this.counter };
  }

  private persist(): void {
    if (!this.loaded) return;
    this.counter++;
    const table: Record<string, SubscriptionGroupConfig> = {};
    for (const name of [...this.table.keys()].sort()) table[name] = this.table.get(name)!;
    try {
      writeFileAtomic(
        this.file,
        encodeSubscriptionGroupWrapper({
          subscriptionGroupTable: table,
          dataVersion: { timestamp: this.clock.now(), counter: this.counter },
        }),
        true,
        true,
      );
    } catch (err) {
      log('cannot write %s: %s', this.file, (err as Error).message);
    }
  }
}
