import { javaHashMapOrder } from '../java-hash.js';
import { parseFastjson } from '../json/fastjson-parse.js';
import { ProtocolError } from '../errors.js';
import { asObject, bodyError } from './shape.js';

/**
 * The broker's `config/consumerOffset.json`
 * (docs/protocol-facts.md#consumer-offset-file): `"<topic>@<group>"` → (queueId → next
 * offset to consume), written by fastjson's PrettyFormat with tab indentation and unquoted
 * integer keys. 5.x adds dataVersion and the derived groupTopicMap.
 */
export type ConsumerOffsetTable = Map<string, Map<number, number>>;

/**
 * The contents of consumerOffset.json: the offset table and, from 5.x, its dataVersion
 * (groupTopicMap is derived from the table: written along with dataVersion, not kept).
 */
export interface ConsumerOffsetFile {
  offsetTable: ConsumerOffsetTable;
  /** 5.x: {counter, stateVersion, timestamp}. */
  dataVersion?: { counter: number; stateVersion: number; timestamp: number } | undefined;
}

function q(s: string): string {
  return JSON.stringify(s);
}

/**
 * Write the file the way a 4.9 broker does (plus the 5.x keys when dataVersion is given):
 *
 *   {\n\t"offsetTable":{\n\t\t"TopicTest@cg1":{0:120,1:98\n\t\t},\n …\n\t}\n}
 */
export function encodeConsumerOffsetFile(file: ConsumerOffsetFile): string {
  const lines: string[] = [];
  const parts: string[] = [];
  if (file.dataVersion) {
    const d = file.dataVersion;
    parts.push(
      `\t"dataVersion":{\n\t\t"counter":${d.counter},\n\t\t"stateVersion":${d.stateVersion},\n\t\t"timestamp":${d.timestamp}\n\t}`,
    );
    const groups = new Map<string, string[]>();
    for (const key of file.offsetTable.keys()) {
      const at = key.lastIndexOf('@');
      if (at < 0) continue;
      const topic = key.slice(0, at);
      const group = key.slice(at + 1);
      const list = groups.get(group) ?? [];
      list.push(topic);
      groups.set(group, list);
    }
    // A group's topics are a java.util.HashSet, which fastjson's PrettyFormat writes inline in
    // the set's iteration order.
    const g = [...groups.keys()]
      .sort()
      .map((k) => `\t\t${q(k)}:[${javaHashMapOrder(groups.get(k)!).map(q).join(',')}]`);
    parts.push(g.length ? `\t"groupTopicMap":{\n${g.join(',\n')}\n\t}` : '\t"groupTopicMap":{}');
  }
  const entries = [...file.offsetTable.entries()].map(([key, queues]) => {
    const inner = [...queues.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([id, off]) => `${id}:${off}`)
      .join(',');
    return `\t\t${q(key)}:{${inner}\n\t\t}`;
  });
  parts.push(entries.length ? `\t"offsetTable":{\n${entries.join(',\n')}\n\t}` : '\t"offsetTable":{}');
  lines.push('{', parts.join(',\n'), '}');
  return lines.join('\n');
}

/**
 * Read a consumerOffset.json as fastjson wrote it (unquoted integer keys included); a queue id that
 * is not an integer or an offset that is not a safe integer throws a ProtocolError.
 */
export function decodeConsumerOffsetFile(text: string): ConsumerOffsetFile {
  const o = asObject(parseFastjson(text), 'consumerOffset.json');
  const offsetTable: ConsumerOffsetTable = new Map();
  for (const [key, v] of Object.entries(asObject(o.offsetTable ?? {}, 'offsetTable'))) {
    const queues = new Map<number, number>();
    for (const [id, off] of Object.entries(asObject(v, `offsetTable.${key}`))) {
      if (!/^-?\d+$/.test(id))
        throw bodyError(`offsetTable.${key}`, `has a non-integer queue id ${JSON.stringify(id)}`);
      if (typeof off !== 'number' || !Number.isSafeInteger(off))
        throw bodyError(`offsetTable.${key}.${id}`, 'is not an offset');
      queues.set(Number(id), off);
    }
    offsetTable.set(key, queues);
  }
  const file: ConsumerOffsetFile = { offsetTable };
  if (o.dataVersion != null) {
    const d = asObject(o.dataVersion, 'dataVersion');
    const num = (k: string): number => {
      const x = d[k];
      if (x != null && typeof x !== 'number')
        throw new ProtocolError(`consumerOffset.json: dataVersion.${k} is not a number`, 0);
      return (x as number | undefined) ?? 0;
    };
    file.dataVersion = { counter: num('counter'), stateVersion: num('stateVersion'), timestamp: num('timestamp') };
  }
  return file;
}
