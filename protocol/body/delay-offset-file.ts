import { parseFastjson } from '../json/fastjson-parse.js';
import { asObject, bodyError } from './shape.js';

/**
 * The broker's `config/delayOffset.json` (DelayOffsetSerializeWrapper): delay level → offset in
 * SCHEDULE_TOPIC_XXXX queue level-1 up to which messages were delivered, written by fastjson's
 * PrettyFormat with unquoted integer keys: `{\n\t"offsetTable":{1:5,2:3\n\t}\n}`.
 */
export type DelayOffsetTable = Map<number, number>;

export function encodeDelayOffsetFile(table: DelayOffsetTable): string {
  const entries = [...table.entries()].sort((a, b) => a[0] - b[0]).map(([level, offset]) => `${level}:${offset}`);
  return entries.length ? `{\n\t"offsetTable":{${entries.join(',')}\n\t}\n}` : '{\n\t"offsetTable":{}\n}';
}

/** Reads what encodeDelayOffsetFile writes and standard JSON (quoted keys). */
export function decodeDelayOffsetFile(text: string): DelayOffsetTable {
  const o = asObject(parseFastjson(text), 'delayOffset.json');
  const table: DelayOffsetTable = new Map();
  for (const [level, off] of Object.entries(asObject(o.offsetTable ?? {}, 'offsetTable'))) {
    if (!/^-?\d+$/.test(level))
      throw bodyError('offsetTable', `has a non-integer delay level ${JSON.stringify(level)}`);
    if (typeof off !== 'number' || !Number.isSafeInteger(off))
      throw bodyError(`offsetTable.${level}`, 'is not an offset');
    table.set(Number(level), off);
  }
  return table;
}
