import {
  DLQ_GROUP_TOPIC_PREFIX,
  RETRY_GROUP_TOPIC_PREFIX,
  SYSTEM_TOPICS,
  SYSTEM_TOPIC_PREFIX,
  NamespaceV2Fields,
} from '../../protocol/internal.js';
import { ClientOptionError } from './errors.js';

/**
 * Namespaces (docs/protocol-facts.md#namespaces), the rules of Apache's NamespaceUtil as the Java client's
 * `setNamespace` applies them (ClientConfig#withNamespace / #withoutNamespace / #queueWithNamespace):
 *
 * * a topic or group `x` becomes `NS%x`; `%RETRY%G` becomes `%RETRY%NS%G`, `%DLQ%G` `%DLQ%NS%G`;
 * * a name already in the namespace is left alone (wrapping twice is wrapping once);
 * * system resources are never wrapped: TopicValidator's system topics, any `rmq_sys_` topic and any
 *   `CID_RMQ_SYS_` group;
 * * unwrapping strips `NS%` only when it is this namespace's (another namespace's name stays whole).
 *
 * 5.x's `namespaceV2` (ClientConfig#getNamespaceV2, NamespaceRpcHook) wraps nothing: it only adds
 * the extFields `nsd`="true" and `ns`=NS to every request, which the open-source broker never reads.
 */
export const NAMESPACE_SEPARATOR = '%';
const CID_RMQ_SYS_PREFIX = 'CID_RMQ_SYS_';

/**
 * A namespace must make `NS%topic` a legal name and must not hold the separator: letters, digits,
 * `_` and `-`, at most 64 characters (a wrapped retry topic must stay within 255).
 */
const NAMESPACE_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** The `namespace` option checked; undefined or "" means none. ClientOptionError naming the option otherwise. */
export function resolveNamespace(namespace: unknown, option = 'namespace'): string | undefined {
  if (namespace === undefined || namespace === '') return undefined;
  if (typeof namespace !== 'string' || !NAMESPACE_PATTERN.test(namespace)) {
    throw new ClientOptionError(
      option,
      `must be 1 to 64 letters, digits, _ or -, got ${JSON.stringify(String(namespace)).slice(0, 80)}`,
    );
  }
  return namespace;
}

/** TopicValidator.isSystemTopic or MixAll.isSysConsumerGroup. */
export function isSystemResource(resource: string): boolean {
  return (
    SYSTEM_TOPICS.has(resource) || resource.startsWith(SYSTEM_TOPIC_PREFIX) || resource.startsWith(CID_RMQ_SYS_PREFIX)
  );
}

function splitRetryDlq(resource: string): [prefix: string, rest: string] {
  if (resource.startsWith(RETRY_GROUP_TOPIC_PREFIX))
    return [RETRY_GROUP_TOPIC_PREFIX, resource.slice(RETRY_GROUP_TOPIC_PREFIX.length)];
  if (resource.startsWith(DLQ_GROUP_TOPIC_PREFIX))
    return [DLQ_GROUP_TOPIC_PREFIX, resource.slice(DLQ_GROUP_TOPIC_PREFIX.length)];
  return ['', resource];
}

/** NamespaceUtil.wrapNamespace: `NS%x`, `%RETRY%NS%G`, `%DLQ%NS%G`; system resources and names already wrapped as they are. */
export function wrapNamespace(namespace: string | undefined, resource: string): string {
  if (!namespace || !resource || isSystemResource(resource)) return resource;
  const [prefix, rest] = splitRetryDlq(resource);
  if (rest.startsWith(namespace + NAMESPACE_SEPARATOR)) return resource;
  return prefix + namespace + NAMESPACE_SEPARATOR + rest;
}

/** NamespaceUtil.withoutNamespace(resource, namespace): strips this namespace only. */
export function withoutNamespace(namespace: string | undefined, resource: string): string {
  if (!namespace || !resource || isSystemResource(resource)) return resource;
  const [prefix, rest] = splitRetryDlq(resource);
  if (!rest.startsWith(namespace + NAMESPACE_SEPARATOR)) return resource;
  return prefix + rest.slice(namespace.length + 1);
}

/** NamespaceUtil.getNamespaceFromResource: the part before the first `%` after any retry/DLQ prefix, or "". */
export function namespaceOf(resource: string): string {
  if (!resource || isSystemResource(resource)) return '';
  const rest = splitRetryDlq(resource)[1];
  const i = rest.indexOf(NAMESPACE_SEPARATOR);
  return i > 0 ? rest.slice(0, i) : '';
}

/** ClientConfig#queueWithNamespace: the same queue with its topic wrapped. */
export function queueWithNamespace<Q extends { topic: string }>(namespace: string | undefined, queue: Q): Q {
  if (!namespace) return queue;
  const topic = wrapNamespace(namespace, queue.topic);
  return topic === queue.topic ? queue : { ...queue, topic };
}

/** The same queue with this namespace stripped from its topic (what Java's send result and listeners show). */
export function queueWithoutNamespace<Q extends { topic: string }>(namespace: string | undefined, queue: Q): Q {
  if (!namespace) return queue;
  const topic = withoutNamespace(namespace, queue.topic);
  return topic === queue.topic ? queue : { ...queue, topic };
}

/** The `namespace` option of Producer and PushConsumer (Java's ClientConfig#setNamespace). */
export interface NamespaceOption {
  /**
   * Wraps every topic and group as `NS%name` on the way out and strips it from what comes back.
   * @default undefined (no namespace)
   */
  namespace?: string;
}

/** Splits the namespace off a client's options: the checked namespace and the options without it. */
export function takeNamespace<T extends NamespaceOption>(
  options: T,
): { namespace: string | undefined; rest: Omit<T, 'namespace'> } {
  // a missing options object is the client's own error to report, not ours
  if (options === null || typeof options !== 'object') return { namespace: undefined, rest: options };
  const { namespace, ...rest } = options;
  return { namespace: resolveNamespace(namespace), rest };
}

/** NamespaceRpcHook#doBeforeRequest: MixAll.RPC_REQUEST_HEADER_NAMESPACED_FIELD ("nsd") and _NAMESPACE_FIELD ("ns"). */
export function stampNamespaceV2(ext: Record<string, string>, namespaceV2: string): void {
  Object.assign(ext, NamespaceV2Fields.encode({ nsd: true, ns: namespaceV2 }));
}
