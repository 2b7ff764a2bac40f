// Constants of the stored-message record (docs/protocol-facts.md#stored-record).
/** MAGICCODE of a stored-message record whose topic length is one byte: every 4.9 record, most 5.x ones. */
export const MESSAGE_MAGIC_CODE_V1 = 0xdaa320a7 | 0; // -626843481
/** MAGICCODE of a record whose topic length is two bytes: written only by 5.x brokers, for topics longer than 127 bytes. */
export const MESSAGE_MAGIC_CODE_V2 = 0xdaa320ab | 0; // -626843477
/** Blank filler at the end of commit-log files; never part of a pull body. */
export const BLANK_MAGIC_CODE = 0xcbd43194 | 0; // -875286124

/** Field positions that do not depend on the host sizes. */
export const MessageRecordOffset = {
  TOTALSIZE: 0,
  MAGICCODE: 4,
  BODYCRC: 8,
  QUEUEID: 12,
  FLAG: 16,
  QUEUEOFFSET: 20,
  PHYSICALOFFSET: 28,
  SYSFLAG: 36,
  BORNTIMESTAMP: 40,
  BORNHOST: 48,
} as const;

/** Record size for the given lengths: 91 + N + T + P with IPv4 hosts and magic v1. */
export function storedMessageSize(
  bodyLength: number,
  topicLength: number,
  propertiesLength: number,
  options: { bornHostV6?: boolean; storeHostV6?: boolean; magic?: 1 | 2 } = {},
): number {
  return (
    4 +
    4 +
    4 +
    4 +
    4 +
    8 +
    8 +
    4 +
    8 +
    (options.bornHostV6 ? 20 : 8) +
    8 +
    (options.storeHostV6 ? 20 : 8) +
    4 +
    8 +
    4 +
    bodyLength +
    (options.magic === 2 ? 2 : 1) +
    topicLength +
    2 +
    propertiesLength
  );
}
