// The requests of bench/hostile's broker attacks (docs/hardening.md), built with the protocol codec: what a
// hostile client sends, byte for byte, without a rocketwire client's checks in between.
import * as zlib from 'node:zlib';
import {
  MessageSysFlag,
  RequestCode,
  createRequest,
  encodeProperties,
  type RemotingCommand,
} from '../../protocol/index.js';

let uniq = 0;

/** A SEND_MESSAGE of `body` to queue `queueId` of `topic` with these user properties and sysFlag. */
export function sendMessage(
  topic: string,
  body: Buffer,
  o: { queueId?: number; properties?: Record<string, string>; sysFlag?: number } = {},
): RemotingCommand {
  const properties = encodeProperties({
    UNIQ_KEY: `7F0000010000000000000000${String(++uniq).padStart(8, '0')}`,
    WAIT: 'true',
    ...(o.properties ?? {}),
  });
  return createRequest(RequestCode.SEND_MESSAGE, {
    extFields: {
      producerGroup: 'hostile_pg',
      topic,
      defaultTopic: 'TBW102',
      defaultTopicQueueNums: '4',
      queueId: String(o.queueId ?? 0),
      sysFlag: String(o.sysFlag ?? 0),
      bornTimestamp: String(Date.now()),
      flag: '0',
      properties,
      reconsumeTimes: '0',
      unitMode: 'false',
      batch: 'false',
    },
    body,
  });
}

/** A PULL_MESSAGE that carries its own SQL92 expression (FLAG_SUBSCRIPTION), as a hostile client sends it. */
export function sqlPull(
  topic: string,
  expression: string,
  o: { queueId?: number; offset?: number; maxMsgNums?: number } = {},
): RemotingCommand {
  return createRequest(RequestCode.PULL_MESSAGE, {
    extFields: {
      consumerGroup: 'hostile_sql_cg',
      topic,
      queueId: String(o.queueId ?? 0),
      queueOffset: String(o.offset ?? 0),
      maxMsgNums: String(o.maxMsgNums ?? 32),
      sysFlag: '4',
      commitOffset: '-1',
      suspendTimeoutMillis: '0',
      subscription: expression,
      subVersion: '1',
      expressionType: 'SQL92',
    },
  });
}

/** `(l OR r)` over `leaves` leaves, balanced, so that no parser recursion depth is the limit. */
export function balancedOr(leaves: number, leaf: (i: number) => string): string {
  const build = (from: number, to: number): string => {
    if (to - from === 1) return leaf(from);
    const mid = (from + to) >>> 1;
    return `(${build(from, mid)} OR ${build(mid, to)})`;
  };
  return build(0, leaves);
}

/** The lexer attack (sql-lex): the 165 KB expression whose leaves are `a=----…1`: every `--` starts a comment. */
export function dashExpression(leaves = 1024, targetBytes = 165_000): string {
  const dashes = Math.max(2, Math.floor(targetBytes / leaves) - 12);
  return balancedOr(leaves, () => `a=${'-'.repeat(dashes)}1`);
}

/** The evaluation attack (sql-eval): a balanced OR of `leaves` comparisons, none matching `a` = 0..n (852 KB at 65 536). */
export function comparisonExpression(leaves = 65_536): string {
  return balancedOr(leaves, (i) => `a = ${1_000_000 + i}`);
}

/**
 * The zip bomb (bomb-*): a zlib body of about `compressedBytes` that inflates to about 1032× its size (zeros), stored
 * with the COMPRESSED sysFlag as any producer may store it.
 */
export function zlibBomb(inflatedBytes = 63 * 1024 * 1024): Buffer {
  return zlib.deflateSync(Buffer.alloc(inflatedBytes), { level: 9 });
}

export const COMPRESSED_ZLIB = MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_ZLIB_TYPE;
