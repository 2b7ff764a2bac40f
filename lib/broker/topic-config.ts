import * as path from 'node:path';
import createDebug from '../debug.js';
import { PermName, type CreateTopicRequestHeader, type TopicConfigBody } from '../../protocol/index.js';
import { loadConfigFile, stderrWarn, writeFileAtomic, type StoreWarn } from './atomic-file.js';
import { StoreFileFormatError } from './errors.js';
import { checkTopicName, isSystemTopic, parseFastjson } from '../../protocol/internal.js';

const log = createDebug('rocketwire:broker');

/** Topics a client may not send to (TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET), in protocol/resource-names.ts. */
export { NOT_ALLOWED_SEND_TOPICS } from '../../protocol/internal.js';

/** TopicConfig as Java serializes it (register-broker bodies, topics.json, GET_TOPIC_CONFIG): protocol's body. */
export type TopicConfig = TopicConfigBody;

/** The TopicConfig an UPDATE_AND_CREATE_TOPIC header asks for (to a broker, or fanned out by the name server). */
export function topicConfigFromHeader(h: CreateTopicRequestHeader): TopicConfig {
  return {
    topicName: h.topic,
    readQueueNums: h.readQueueNums,
    writeQueueNums: h.writeQueueNums,
    perm: h.perm,
    topicFilterType: h.topicFilterType,
    topicSysFlag: h.topicSysFlag ?? 0,
    order: h.order,
  };
}

export function newTopicConfig(
  topicName: string,
  queueNums: number,
  perm = PermName.PERM_READ | PermName.PERM_WRITE,
): TopicConfig {
  return {
    topicName,
    readQueueNums: queueNums,
    writeQueueNums: queueNums,
    perm,
    topicFilterType: 'SINGLE_TAG',
    topicSysFlag: 0,
    order: false,
  };
}

/** TopicValidator.validateTopic's remark for a bad topic name, or null (protocol/resource-names.ts). */
export const validateTopicName: (topic: string) => string | null = checkTopicName;

/** The filter types Java's TopicFilterType enum has (CreateTopicRequestHeader.getTopicFilterTypeEnum). */
const TOPIC_FILTER_TYPES = new Set(['SINGLE_TAG', 'MULTI_TAG']);

/**
 * Why a topic config asked for by UPDATE_AND_CREATE_TOPIC (to a broker, or fanned out by the name
 * server) is refused, as the remark of an INVALID_PARAMETER answer naming the field; null when it
 * is accepted. Like Java's AdminBrokerProcessor#updateAndCreateTopic (validateSystemTopicWhenUpdateTopic,
 * true by default), a system topic cannot be created or changed. Java checks neither the queue
 * counts nor the perm (only its admin client checks the perm): 2 000 000 read queues made
 * GET_CONSUME_STATS build a 231 MB body, and −7 write queues made a send land in queue −6. The
 * name itself was checked at the request boundary (resource-names.ts).
 */
export function checkTopicConfigRequest(config: TopicConfig, maxQueueNums: number): string | null {
  if (isSystemTopic(config.topicName)) return `The topic[${config.topicName}] is conflict with system topic.`;
  for (const field of ['readQueueNums', 'writeQueueNums'] as const) {
    const n = config[field];
    if (!Number.isInteger(n) || n < 1 || n > maxQueueNums)
      return `${field} ${n} is out of range, allowing only 1 to ${maxQueueNums}`;
  }
  if (!Number.isInteger(config.perm) || config.perm < 0 || config.perm > 7)
    return `perm ${config.perm} is invalid, allowing only 0 to 7 (PermName)`;
  if (!TOPIC_FILTER_TYPES.has(config.topicFilterType))
    return `topicFilterType ${JSON.stringify(config.topicFilterType.slice(0, 64))} is invalid, allowing only SINGLE_TAG or MULTI_TAG`;
  return null;
}

/** topics.json's table; throws on anything that is not one (so a damaged file is never taken for an empty one). */
function decodeTopicsFile(text: string): Map<string, TopicConfig> {
  const parsed = parseFastjson(text);
  const table = (parsed as { topicConfigTable?: unknown } | null)?.topicConfigTable;
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    typeof table !== 'object' ||
    table === null ||
    Array.isArray(table)
  ) {
    throw new StoreFileFormatError('no topicConfigTable object');
  }
  const out = new Map<string, TopicConfig>();
  for (const [name, c] of Object.entries(table as Record<string, unknown>)) {
    if (typeof c !== 'object' || c === null)
      throw new StoreFileFormatError(`topic ${JSON.stringify(name)} is not an object`);
    const config = { ...newTopicConfig(name, 1), ...(c as Partial<TopicConfig>), topicName: name };
    if (
      !Number.isInteger(config.readQueueNums) ||
      !Number.isInteger(config.writeQueueNums) ||
      !Number.isInteger(config.perm)
    ) {
      throw new StoreFileFormatError(`topic ${JSON.stringify(name)} has non-integer queue counts or perm`);
    }
    out.set(name, config);
  }
  return out;
}

/**
 * Topic configs of one broker, persisted to `<store>/config/topics.json` on every change
 * (changes are rare: topic creation).
 */
export class TopicConfigManager {
  private readonly file: string;
  private readonly table = new Map<string, TopicConfig>();
  /** Called after a topic is created or changed (the broker re-registers with the name server). */
  onChange: ((config: TopicConfig) => void) | null = null;
  /** False until load() succeeded: persist() must not replace a file nobody could read. */
  private loaded = false;

  constructor(
    storeDir: string,
    private readonly warn: StoreWarn = stderrWarn,
  ) {
    this.file = path.join(storeDir, 'config', 'topics.json');
  }

  /** Read the file (or its .bak, as Java's ConfigManager does); throws ConfigFileError when neither can be read. */
  load(): void {
    const table = loadConfigFile(this.file, decodeTopicsFile, this.warn);
    if (table) for (const [name, c] of table) this.table.set(name, c);
    this.loaded = true;
  }

  persist(): void {
    if (!this.loaded) return;
    const obj: Record<string, TopicConfig> = {};
    for (const name of [...this.table.keys()].sort()) obj[name] = this.table.get(name)!;
    try {
      writeFileAtomic(this.file, JSON.stringify({ topicConfigTable: obj }, null, '\t'), true, true);
    } catch (err) {
      log('cannot write %s: %s', this.file, (err as Error).message);
    }
  }

  get(topic: string): TopicConfig | undefined {
    return this.table.get(topic);
  }
  all(): TopicConfig[] {
    return [...this.table.values()];
  }

  /** Remove a topic (DELETE_TOPIC_IN_BROKER); persists. True when it existed. */
  delete(topic: string): boolean {
    const had = this.table.delete(topic);
    if (had) this.persist();
    return had;
  }

  /** Create or replace a topic; persists and notifies. */
  put(config: TopicConfig): TopicConfig {
    this.table.set(config.topicName, config);
    this.persist();
    this.onChange?.(config);
    return config;
  }

  /**
   * Every topic of `topics` that is missing, created with `queueNums` queues and persisted once
   * (a heartbeat's retry topics): one ensure() per topic rewrote and fsynced topics.json per topic,
   * so a 116 KB heartbeat of 1 000 groups held the event loop for 13 s.
   */
  ensureMany(topics: Iterable<string>, queueNums: number): void {
    const made: TopicConfig[] = [];
    for (const topic of topics) {
      if (this.table.has(topic)) continue;
      const config = newTopicConfig(topic, queueNums);
      this.table.set(topic, config);
      made.push(config);
    }
    if (made.length === 0) return;
    this.persist();
    for (const config of made) this.onChange?.(config);
  }

  /** The topic, created with `queueNums` queues when missing (system topics, retry, DLQ). */
  ensure(topic: string, queueNums: number, perm = PermName.PERM_READ | PermName.PERM_WRITE): TopicConfig {
    return this.table.get(topic) ?? this.put(newTopicConfig(topic, queueNums, perm));
  }
}
