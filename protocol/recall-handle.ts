/**
 * The recall handle of a 5.x timer message (RecallMessageHandle.HandleV1): the words
 * `v1 <topic> <brokerName> <timestamp> <uniqKey>` joined by single spaces, UTF-8, then base64 with
 * the URL alphabet and padding (java.util.Base64.getUrlEncoder). The broker makes it when it parks
 * a timer message (SendMessageProcessor#attachRecallHandle): topic = the real topic, timestamp =
 * TIMER_OUT_MS + 1 (the delivery time after the precision floor, plus one so that the delete
 * marker made from it lands in the same slot), uniqKey = the message's UNIQ_KEY.
 */
export interface RecallHandle {
  topic: string;
  brokerName: string;
  /** The timestamp word as the handle holds it (Java keeps it a string and parses it where needed). */
  timestamp: string;
  /** The message's UNIQ_KEY (the handle's "messageId"). */
  messageId: string;
}

/** The handle for a parked timer message, as the broker writes it (base64url with padding). */
export function encodeRecallHandle(h: RecallHandle): string {
  const raw = ['v1', h.topic, h.brokerName, h.timestamp, h.messageId].join(' ');
  return Buffer.from(raw, 'utf8').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * Decode a handle as RecallMessageHandle.decodeHandle does: base64url (padding optional; `+` and
 * `/` are refused, as Java's URL decoder refuses them), split on single spaces, first word `v1`, at
 * least 5 words (extra words are ignored). null for anything else (Java: "recall handle is invalid").
 */
export function decodeRecallHandle(handle: unknown): RecallHandle | null {
  if (typeof handle !== 'string' || handle === '') return null;
  const bare = handle.replace(/={1,2}$/, '');
  if (!/^[A-Za-z0-9_-]*$/.test(bare) || bare.length % 4 === 1) return null;
  if (bare.length !== handle.length && handle.length % 4 !== 0) return null;
  const items = Buffer.from(bare, 'base64url').toString('utf8').split(' ');
  if (items[0] !== 'v1' || items.length < 5) return null;
  return { topic: items[1]!, brokerName: items[2]!, timestamp: items[3]!, messageId: items[4]! };
}
