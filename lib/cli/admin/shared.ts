import type { AdminClient } from '../../admin/index.js';
import type { MessageExt } from '../../../protocol/index.js';
import { printTable, UsageError, type CliIO, type OptionSpec, type OptionValues } from '../common.js';

/** What a subcommand writes: JSON (`--json`, one document) or a readable table. */
export interface AdminOutput {
  readonly json: boolean;
  readonly io: CliIO;
  /** Writes `value` as one JSON line with --json, else calls `text`. */
  emit(value: unknown, text: () => void): void;
  table(header: string[], rows: string[][]): void;
  line(text: string): void;
}

/** One `rocketwire admin <group> <name>` subcommand. */
export interface AdminSubcommand {
  readonly name: string;
  readonly summary: string;
  /** Options beyond the shared --namesrv, --timeout, --json. */
  readonly options: OptionSpec;
  /** Lines describing those options. */
  readonly help: string;
  /** The option a lone positional argument fills (`admin message trace MSGID` fills --id). */
  readonly positional?: string;
  run(admin: AdminClient, values: OptionValues, out: AdminOutput): Promise<void>;
}

/** A group of subcommands (`topic`, `group`…), or one command on its own (`cluster`, name ''). */
export interface AdminCommandGroup {
  readonly name: string;
  readonly summary: string;
  readonly subcommands: readonly AdminSubcommand[];
}

export function makeOutput(io: CliIO, json: boolean): AdminOutput {
  return {
    json,
    io,
    emit(value, text) {
      if (json) io.stdout.write(JSON.stringify(value) + '\n');
      else text();
    },
    table(header, rows) {
      printTable(io.stdout, header, rows);
    },
    line(text) {
      io.stdout.write(text + '\n');
    },
  };
}

/** mqadmin's time format (UtilAll.YYYY_MM_DD_HH_MM_SS), in UTC, or "N/A" for 0. */
export function timeText(ms: number): string {
  if (!ms) return 'N/A';
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '');
}

/** A required string option, naming it when missing. */
export function need(values: OptionValues, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** A message as `message id|key|offset` print it: headers, properties, body. */
export function messageJson(m: MessageExt, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...extra,
    topic: m.topic,
    msgId: m.msgId,
    offsetMsgId: m.offsetMsgId,
    queueId: m.queueId,
    queueOffset: m.queueOffset,
    commitLogOffset: m.commitLogOffset,
    tags: m.tags ?? null,
    keys: m.properties.KEYS ?? null,
    storeHost: m.storeHost,
    bornHost: m.bornHost,
    storeTimestamp: m.storeTimestamp,
    bornTimestamp: m.bornTimestamp,
    reconsumeTimes: m.reconsumeTimes,
    sysFlag: m.sysFlag,
    bodyCRC: m.bodyCRC,
    storeSize: m.storeSize,
    properties: m.properties,
    body: m.body.toString('utf8'),
    bodyBase64: m.body.toString('base64'),
  };
}

/** The readable form of one message (QueryMsgByIdSubCommand's layout: one field a line). */
export function printMessage(out: AdminOutput, m: MessageExt, brokerName: string): void {
  const rows: [string, string][] = [
    ['OffsetID', m.offsetMsgId],
    ['Topic', m.topic],
    ['Tags', `[${m.tags ?? ''}]`],
    ['Keys', `[${m.properties.KEYS ?? ''}]`],
    ['Broker', brokerName],
    ['Queue ID', String(m.queueId)],
    ['Queue Offset', String(m.queueOffset)],
    ['CommitLog Offset', String(m.commitLogOffset)],
    ['Reconsume Times', String(m.reconsumeTimes)],
    ['Born Timestamp', timeText(m.bornTimestamp)],
    ['Store Timestamp', timeText(m.storeTimestamp)],
    ['Born Host', m.bornHost],
    ['Store Host', m.storeHost],
    ['System Flag', String(m.sysFlag)],
    [
      'Properties',
      Object.entries(m.properties)
        .map(([k, v]) => `${k}=${v}`)
        .join(', '),
    ],
    ['Message Body', m.body.toString('utf8')],
  ];
  for (const [k, v] of rows) out.line(`${k.padEnd(20)}${v}`);
}
