import { createRequire } from 'node:module';
import { messageQueueToString, type MessageQueue } from '../../../protocol/internal.js';
import { ConsumerOptionError } from '../errors.js';
import { optionValidator } from '../../validate.js';

/**
 * How the queues of one topic are split among the members of a group (AllocateMessageQueueStrategy).
 * `mqAll` and `cidAll` arrive sorted as Java sorts them; the result must be identical on every member
 * (Java or not) or queues are consumed twice or not at all.
 * @category Consuming
 */
export interface AllocateMessageQueueStrategy {
  /** Java's getName(), e.g. "AVG". */
  readonly name: string;
  /**
   * The queues `currentCID` gets out of `mqAll` when the group's consumers are `cidAll` (every consumer
   * computes the same split).
   */
  allocate(
    consumerGroup: string,
    currentCID: string,
    mqAll: readonly MessageQueue[],
    cidAll: readonly string[],
  ): MessageQueue[];
}

/** Java's precondition: an unknown current client gets nothing. */
function indexOfClient(currentCID: string, mqAll: readonly MessageQueue[], cidAll: readonly string[]): number {
  if (currentCID === '' || mqAll.length === 0 || cidAll.length === 0) return -1;
  return cidAll.indexOf(currentCID);
}

/** AllocateMessageQueueAveragely: contiguous blocks, the first `n % c` clients get one extra queue. */
export const allocateAveragely: AllocateMessageQueueStrategy = {
  name: 'AVG',
  allocate(_group, currentCID, mqAll, cidAll) {
    const index = indexOfClient(currentCID, mqAll, cidAll);
    if (index < 0) return [];
    const n = mqAll.length;
    const c = cidAll.length;
    const mod = n % c;
    const averageSize = n <= c ? 1 : mod > 0 && index < mod ? Math.floor(n / c) + 1 : Math.floor(n / c);
    const startIndex = mod > 0 && index < mod ? index * averageSize : index * averageSize + mod;
    const range = Math.min(averageSize, n - startIndex);
    const result: MessageQueue[] = [];
    for (let i = 0; i < range; i++) result.push(mqAll[startIndex + i]!);
    return result;
  },
};

/** AllocateMessageQueueAveragelyByCircle: queue k goes to client k % c. */
export const allocateAveragelyByCircle: AllocateMessageQueueStrategy = {
  name: 'AVG_BY_CIRCLE',
  allocate(_group, currentCID, mqAll, cidAll) {
    const index = indexOfClient(currentCID, mqAll, cidAll);
    if (index < 0) return [];
    const result: MessageQueue[] = [];
    for (let i = index; i < mqAll.length; i += cidAll.length) result.push(mqAll[i]!);
    return result;
  },
};

/** First 4 bytes of MD5 of the UTF-8 key, big-endian, as an unsigned number (Java's MD5Hash in ConsistentHashRouter). */
export function consistentHashMd5(key: string): number {
  return (createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto'))
    .createHash('md5')
    .update(key, 'utf8')
    .digest()
    .readUInt32BE(0);
}

/**
 * AllocateMessageQueueConsistentHash: a ring of `virtualNodeCnt` virtual nodes per client with keys
 * "<clientId>-<i>"; a queue (key = Java's MessageQueue.toString()) belongs to the first virtual node
 * whose hash is >= its own, wrapping round. Nodes are added in sorted client order and a later node
 * with the same hash replaces an earlier one, as in Java's TreeMap.put.
 */
export function allocateConsistentHash(virtualNodeCnt = 10): AllocateMessageQueueStrategy {
  optionValidator(ConsumerOptionError, { atLeast: 'non-negative' }).intAtLeast('virtualNodeCnt', virtualNodeCnt, 0);
  return {
    name: 'CONSISTENT_HASH',
    allocate(_group, currentCID, mqAll, cidAll) {
      const index = indexOfClient(currentCID, mqAll, cidAll);
      if (index < 0) return [];
      const ring = new Map<number, string>();
      for (const cid of cidAll) {
        for (let i = 0; i < virtualNodeCnt; i++) ring.set(consistentHashMd5(`${cid}-${i}`), cid);
      }
      const hashes = [...ring.keys()].sort((a, b) => a - b);
      if (hashes.length === 0) return [];
      const result: MessageQueue[] = [];
      for (const mq of mqAll) {
        const h = consistentHashMd5(messageQueueToString(mq));
        // First ring position >= h (binary search), else wrap to the smallest.
        let lo = 0;
        let hi = hashes.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (hashes[mid]! < h) lo = mid + 1;
          else hi = mid;
        }
        const owner = ring.get(hashes[lo === hashes.length ? 0 : lo]!);
        if (owner === currentCID) result.push(mq);
      }
      return result;
    },
  };
}

/** AllocateMessageQueueByConfig: a fixed list of queues, whatever the group looks like. */
export function allocateByConfig(queues: readonly MessageQueue[]): AllocateMessageQueueStrategy {
  const fixed = queues.slice();
  return { name: 'CONFIG', allocate: () => fixed.slice() };
}

/**
 * The `allocateStrategy` option: a Java strategy by name, a fixed list of queues, or a strategy of your own.
 * @category Consuming
 */
export type AllocateStrategyOption =
  | 'AVG'
  | 'AVG_BY_CIRCLE'
  | 'CONSISTENT_HASH'
  | { config: readonly MessageQueue[] }
  | AllocateMessageQueueStrategy
  | AllocateMessageQueueStrategy['allocate'];

/** Resolves the `allocateStrategy` option to a strategy object, or null when it is not recognised. */
export function resolveAllocateStrategy(opt: AllocateStrategyOption): AllocateMessageQueueStrategy | null {
  if (opt === 'AVG') return allocateAveragely;
  if (opt === 'AVG_BY_CIRCLE') return allocateAveragelyByCircle;
  if (opt === 'CONSISTENT_HASH') return allocateConsistentHash(10);
  if (typeof opt === 'function') return { name: opt.name || 'CUSTOM', allocate: opt };
  if (opt && typeof opt === 'object') {
    if ('config' in opt && Array.isArray(opt.config)) return allocateByConfig(opt.config);
    if ('allocate' in opt && typeof opt.allocate === 'function') return opt;
  }
  return null;
}
