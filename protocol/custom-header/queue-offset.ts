import { defineHeader, F, type HeaderOf } from './define.js';

/**
 * Offset look-ups sent to a broker master
 * (docs/protocol-facts.md#offset-look-ups). Requests carry topic (String) and queueId
 * (Integer), both required, plus bname; responses carry one Long.
 */

const maxSpec = {
  topic: F.string.required(),
  queueId: F.int.required(),
  committed: F.boolean.optional(),
  bname: F.string.optional(),
};
/** GET_MAX_OFFSET (30): topic, queueId, committed (5.x Boolean, default true), bname. */
export const GetMaxOffsetRequestHeader = defineHeader('GetMaxOffsetRequestHeader', maxSpec);
export type GetMaxOffsetRequestHeader = HeaderOf<typeof maxSpec>;
const offsetSpec = { offset: F.long.required() };
/** GET_MAX_OFFSET response: offset = one past the last message (0 for an empty queue). */
export const GetMaxOffsetResponseHeader = defineHeader('GetMaxOffsetResponseHeader', offsetSpec);
export type GetMaxOffsetResponseHeader = HeaderOf<typeof offsetSpec>;

const minSpec = { topic: F.string.required(), queueId: F.int.required(), bname: F.string.optional() };
/** GET_MIN_OFFSET (31): topic, queueId, bname. */
export const GetMinOffsetRequestHeader = defineHeader('GetMinOffsetRequestHeader', minSpec);
export type GetMinOffsetRequestHeader = HeaderOf<typeof minSpec>;
/** GET_MIN_OFFSET response: offset = min logical offset still stored. */
export const GetMinOffsetResponseHeader = defineHeader('GetMinOffsetResponseHeader', offsetSpec);
export type GetMinOffsetResponseHeader = HeaderOf<typeof offsetSpec>;

const searchSpec = {
  topic: F.string.required(),
  queueId: F.int.required(),
  timestamp: F.long.required(),
  boundaryType: F.string.optional(),
  bname: F.string.optional(),
};
/** SEARCH_OFFSET_BY_TIMESTAMP (29): topic, queueId, timestamp (Long ms), boundaryType (5.x "LOWER"/"UPPER"), bname. */
export const SearchOffsetRequestHeader = defineHeader('SearchOffsetRequestHeader', searchSpec);
export type SearchOffsetRequestHeader = HeaderOf<typeof searchSpec>;
/** SEARCH_OFFSET_BY_TIMESTAMP response: offset. */
export const SearchOffsetResponseHeader = defineHeader('SearchOffsetResponseHeader', offsetSpec);
export type SearchOffsetResponseHeader = HeaderOf<typeof offsetSpec>;

/** Java's BoundaryType.getType: "upper" in any case is UPPER, anything else LOWER. */
export function parseBoundaryType(s: string | null | undefined): 'LOWER' | 'UPPER' {
  return s != null && s.toLowerCase() === 'upper' ? 'UPPER' : 'LOWER';
}

/** GET_EARLIEST_MSG_STORETIME (32): topic, queueId, bname. */
export const GetEarliestMsgStoretimeRequestHeader = defineHeader('GetEarliestMsgStoretimeRequestHeader', minSpec);
export type GetEarliestMsgStoretimeRequestHeader = HeaderOf<typeof minSpec>;
const timestampSpec = { timestamp: F.long.required() };
/** GET_EARLIEST_MSG_STORETIME response: timestamp (Long ms). */
export const GetEarliestMsgStoretimeResponseHeader = defineHeader(
  'GetEarliestMsgStoretimeResponseHeader',
  timestampSpec,
);
export type GetEarliestMsgStoretimeResponseHeader = HeaderOf<typeof timestampSpec>;
