import { namespaceOf, withoutNamespace, wrapNamespace } from '../client/index.js';
import type { ProducerConnectionInfo } from './admin-ops-types.js';
import type { FoundMessage, GroupProgress } from './admin-types.js';
import { scopeStatsAll, type StatsAllRow } from './admin-stats.js';

type Arg = 'topic' | 'group' | 'args.topic' | null;

/** The operations that name topics or groups: which argument is which. */
const WRAPPED: Record<string, readonly Arg[]> = {
  topicRoute: ['topic'],
  topicRouteBrokers: ['topic'],
  topicStatus: ['topic'],
  topicConfig: [null, 'topic'],
  createOrUpdateTopic: ['args.topic'],
  updateTopic: ['args.topic'],
  deleteTopic: ['topic'],
  consumerProgress: ['group', 'topic'],
  consumerConnection: ['group'],
  consumerStatus: ['group'],
  createGroup: ['group'],
  deleteGroup: ['group'],
  resetOffset: ['group', 'topic'],
  messageById: [null, 'topic'],
  messageByKey: ['topic'],
  messageByOffset: ['topic'],
  dlqResend: ['group'],
  updateStaticTopic: ['args.topic'],
  setConsumeMode: ['group', 'topic'],
  producerConnection: ['group', 'topic'],
  updateTopicPerm: ['topic'],
  cloneGroupOffset: ['group', 'group', 'topic'],
  skipAccumulatedMessage: ['group', 'topic'],
  statsAll: ['args.topic'],
};

function wrapArg(ns: string, kind: Arg, v: unknown): unknown {
  if (kind === null) return v;
  if (kind === 'args.topic') {
    if (v === null || typeof v !== 'object' || typeof (v as { topic?: unknown }).topic !== 'string') return v;
    return { ...(v as object), topic: wrapNamespace(ns, (v as { topic: string }).topic) };
  }
  return typeof v === 'string' && v !== '' ? wrapNamespace(ns, v) : v;
}

function unwrapFound(ns: string, found: FoundMessage[]): FoundMessage[] {
  for (const f of found) f.message.topic = withoutNamespace(ns, f.message.topic);
  return found;
}

/**
 * The AdminClient's `namespace` option: the topics and groups an operation names are the
 * application's (`Orders`, `cg`) and are sent as `NS%Orders`, `NS%cg` (NamespaceUtil.wrapNamespace:
 * `%RETRY%NS%cg` for a retry topic, system topics untouched), and what comes back names them
 * without the namespace: topicList() and groupList() list this namespace's resources only,
 * consumerProgress() queues and found messages carry unwrapped topics. Java's DefaultMQAdminExt
 * takes ClientConfig's namespace but applies it nowhere (mqadmin works on full names); this is what
 * the namespaced producers and consumers of a team see, from the operator's side. A full name of
 * this namespace (`NS%Orders`) is kept as it is, so scripts written for mqadmin's names still work.
 *
 * Applied to the AdminClient's own methods, wrapped in place.
 */
export function applyAdminNamespace(admin: object, ns: string | undefined): void {
  if (!ns) return;
  const target = admin as Record<string, unknown>;
  for (const [name, kinds] of Object.entries(WRAPPED)) {
    const original = target[name] as (...a: unknown[]) => Promise<unknown>;
    if (typeof original !== 'function') continue;
    target[name] = (...args: unknown[]) =>
      original
        .apply(
          admin,
          args.map((a, i) => wrapArg(ns, kinds[i] ?? null, a)),
        )
        .then((r) => unwrapResult(ns, name, r));
  }
  // statsAll goes through this namespace's topics only, and names them (and their groups) without it
  scopeStatsAll(admin, (t) => namespaceOf(t) === ns);
  const topicList = target.topicList as () => Promise<string[]>;
  target.topicList = () =>
    topicList.call(admin).then((ts) => ts.filter((x) => namespaceOf(x) === ns).map((x) => withoutNamespace(ns, x)));
  const groupList = target.groupList as (c?: string) => Promise<Array<{ groupName: string }>>;
  target.groupList = (clusterName?: string) =>
    groupList
      .call(admin, clusterName)
      .then((gs) =>
        gs
          .filter((g) => namespaceOf(g.groupName) === ns)
          .map((g) => ({ ...g, groupName: withoutNamespace(ns, g.groupName) })),
      );
}

function unwrapResult(ns: string, name: string, r: unknown): unknown {
  if (name === 'messageById' || name === 'messageByKey') return unwrapFound(ns, r as FoundMessage[]);
  if (name === 'messageByOffset') return unwrapFound(ns, [r as FoundMessage])[0];
  if (name === 'statsAll') {
    for (const row of r as StatsAllRow[]) {
      row.topic = withoutNamespace(ns, row.topic);
      if (row.group !== null) row.group = withoutNamespace(ns, row.group);
    }
  }
  if (name === 'producerConnection') {
    const p = r as ProducerConnectionInfo;
    p.group = withoutNamespace(ns, p.group);
  }
  if (name === 'consumerProgress') {
    const p = r as GroupProgress;
    p.group = withoutNamespace(ns, p.group);
    for (const q of p.queues) q.topic = withoutNamespace(ns, q.topic);
  }
  return r;
}
