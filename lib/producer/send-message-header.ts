/**
 * SendMessageRequestHeader fields (§5.4). V2 (codes 310/320) carries them under one-letter keys a..n;
 * V1 (code 10) under the long names. Keys are written in Java's HashMap order for the V2 letters
 * (a..n are in bucket order already); every value is a string as on the wire.
 */
export interface SendMessageRequestFields {
  producerGroup: string;
  topic: string;
  defaultTopic: string;
  defaultTopicQueueNums: number;
  queueId: number;
  sysFlag: number;
  bornTimestamp: number;
  flag: number;
  properties: string;
  reconsumeTimes: number;
  unitMode: boolean;
  maxReconsumeTimes?: number;
  batch: boolean;
  brokerName?: string;
}

export function encodeSendHeaderV2(f: SendMessageRequestFields): Record<string, string> {
  const h: Record<string, string> = {
    a: f.producerGroup,
    b: f.topic,
    c: f.defaultTopic,
    d: String(f.defaultTopicQueueNums),
    e: String(f.queueId),
    f: String(f.sysFlag),
    g: String(f.bornTimestamp),
    h: String(f.flag),
  };
  if (f.properties.length > 0) h.i = f.properties;
  h.j = String(f.reconsumeTimes);
  h.k = String(f.unitMode);
  if (f.maxReconsumeTimes !== undefined) h.l = String(f.maxReconsumeTimes);
  h.m = String(f.batch);
  if (f.brokerName !== undefined) h.n = f.brokerName;
  return h;
}

export function encodeSendHeaderV1(f: SendMessageRequestFields): Record<string, string> {
  const h: Record<string, string> = {
    producerGroup: f.producerGroup,
    topic: f.topic,
    defaultTopic: f.defaultTopic,
    defaultTopicQueueNums: String(f.defaultTopicQueueNums),
    queueId: String(f.queueId),
    sysFlag: String(f.sysFlag),
    bornTimestamp: String(f.bornTimestamp),
    flag: String(f.flag),
  };
  if (f.properties.length > 0) h.properties = f.properties;
  h.reconsumeTimes = String(f.reconsumeTimes);
  h.unitMode = String(f.unitMode);
  if (f.maxReconsumeTimes !== undefined) h.maxReconsumeTimes = String(f.maxReconsumeTimes);
  h.batch = String(f.batch);
  if (f.brokerName !== undefined) h.bname = f.brokerName;
  return h;
}
