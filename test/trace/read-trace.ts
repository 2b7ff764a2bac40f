// Reading back what traced clients wrote: the Sub records of a broker's RMQ_SYS_TRACE_TOPIC.
import { PushConsumer, type MessageExt } from '../../lib/consumer/index.js';
import { decodeTraceData, RMQ_SYS_TRACE_TOPIC, type TraceContext } from '../../lib/trace/index.js';
import { uniqueName, until } from '../consumer/helpers.js';

/**
 * The Sub records in RMQ_SYS_TRACE_TOPIC, read until `enough` says so (a broker of the test's own:
 * every record there is the bench's; Sub records do not name the topic).
 */
export async function subRecords(namesrv: string, enough: (recs: TraceContext[]) => boolean): Promise<TraceContext[]> {
  const recs: TraceContext[] = [];
  const reader = new PushConsumer({
    consumerGroup: uniqueName('trace_reader'),
    namesrvAddr: namesrv,
    consumeFromWhere: 'first',
  });
  reader.subscribe(RMQ_SYS_TRACE_TOPIC);
  await reader.start((msgs: MessageExt[]) => {
    for (const m of msgs)
      for (const r of decodeTraceData(m.body.toString('utf8')))
        if (r.traceType === 'SubBefore' || r.traceType === 'SubAfter') recs.push(r);
    return 'CONSUME_SUCCESS';
  });
  try {
    await until(() => enough(recs), 'the trace records', 30_000);
  } finally {
    await reader.shutdown();
  }
  return recs;
}

/** Distinct message ids in the records of one type. */
export function distinctIds(recs: TraceContext[], type: 'SubBefore' | 'SubAfter'): number {
  return new Set(recs.filter((x) => x.traceType === type).flatMap((x) => x.traceBeans.map((b) => b.msgId))).size;
}
