import * as path from 'node:path';
import createDebug from 'debug';
import {
  DLQ_GROUP_TOPIC_PREFIX,
  PermName,
  RETRY_GROUP_TOPIC_PREFIX,
  SCHEDULE_TOPIC,
  type CreateTopicRequestHeader,
  type TopicConfigBody,
} from '../../protocol/index.js';
import { loadConfigFile, stderrWarn, writeFileAtomic, type StoreWarn } from './atomic-file.js';
import { parseFastjson } from '../../protocol/internal.js';

const log = createDebug('rocketwire:broker');

/** Topics a client may not send to (TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET). */
export const NOT_ALLOWED_SEND_TOPICS = new Set([
  SCHEDULE_TOPIC,
  'RMQ_SYS_TRANS_HALF_TOPIC',
  'RMQ_SYS_TRANS_OP_HALF_TOPIC',
  'TRANS_CHECK_MAX_TIME_TOPIC',
  'SELF_TEST_TOPIC',
  'OFFSET_MOVED_EVENT',
]);

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

export function newTopicConfig(topicName: string, queueNums: number, perm = PermName.PERM_READ | PermName.PERM_WRITE): TopicConfig {
  return { topicName, readQueueNums: queueNums, writeQueueNums: queueNums, perm, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false };
}

/** Topic names Java's validator accepts: [%|a-zA-Z0-9_-]{1,127} (retry/DLQ names up to 255). */
export function validateTopicName(topic: string): string | null {
  if (!topic || !topic.trim()) return 'The specified topic is blank.';
  if (!/^[%|a-zA-Z0-9_-]+$/.test(topic)) return `The specified topic[${topic}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$`;
  const max = topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) || topic.startsWith(DLQ_GROUP_TOPIC_PREFIX) ? 255 : 127;
  if (topic.length > max) return `The specified topic is longer than topic max length ${max}.`;
  return null;
}

/** topics.json's table; throws on anything that is not one (so a damaged file is never taken for an empty one). */
function decodeTopicsFile(text: string): Map<string, TopicConfig> {
  const parsed = parseFastjson(text);
  const table = (parsed as { topicConfigTable?: unknown } | null)?.topicConfigTable;
  if (typeof parsed !== 'object' || parsed === null || typeof table !== 'object' || table === null || Array.isArray(table)) {
    throw new Error('no topicConfigTable object');
  }
  const out = new Map<string, TopicConfig>();
  for (const [name, c] of Object.entries(table as Record<string, unknown>)) {
    if (typeof c !== 'object' || c === null) throw new Error(`topic ${JSON.stringify(name)} is not an object`);
    const config = { ...newTopicConfig(name, 1), ...(c as Partial<TopicConfig>), topicName: name };
    if (!Number.isInteger(config.readQueueNums) || !Number.isInteger(config.writeQueueNums) || !Number.isInteger(config.perm)) {
      throw new Error(`topic ${JSON.stringify(name)} has non-integer queue counts or perm`);
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

  /** Create or replace a topic; persists and notifies. */
  put(config: TopicConfig): TopicConfig {
    this.table.set(config.topicName, config);
    this.persist();
    this.onChange?.(config);
    return config;
  }

  /** The topic, created with `queueNums` queues when missing (system topics, retry, DLQ). */
  ensure(topic: string, queueNums: number, perm = PermName.PERM_READ | PermName.PERM_WRITE): TopicConfig {
    return this.table.get(topic) ?? this.put(newTopicConfig(topic, queueNums, perm));
  }
}
