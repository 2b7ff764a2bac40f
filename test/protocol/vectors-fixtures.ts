import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Loader for the golden vectors written by test/interop/vectors/generate.sh (Apache RocketMQ's own
 * classes). Tests read the committed files only; no Java is needed to run them.
 */
export const VECTOR_VERSIONS = ['4.9.8', '5.3.3', '5.5.0'] as const;

// Compiled tests live in dist/test/protocol/; the fixtures stay in the source tree.
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));

export function fixturePath(rel: string): string {
  return FIXTURES + rel;
}

export function loadVectors<T>(version: string, file: string): T {
  return JSON.parse(readFileSync(fixturePath(`vectors/${version}/${file}`), 'utf8')) as T;
}

export interface FrameVector {
  name: string;
  description: string;
  serializeType: 'JSON' | 'ROCKETMQ';
  hex: string;
  classicEncodeHex?: string;
  fields: {
    code: number;
    language: string;
    version: number;
    opaque: number;
    flag: number;
    remark?: string;
    /** [key, value] pairs in the order Java wrote them. */
    extFields: [string, string][];
    extFieldsTableLength?: number;
    bodyHex?: string;
  };
  decoded: {
    code: number;
    language?: string;
    version: number;
    opaque: number;
    flag: number;
    remark?: string;
    serializeType: string;
    extFields?: Record<string, string>;
    bodyHex?: string;
  };
}

export interface JavaMessageView {
  topic: string;
  queueId: number;
  flag: number;
  queueOffset: string;
  commitLogOffset: string;
  sysFlag: number;
  bornTimestamp: string;
  bornHostAddress: string;
  bornHostPort: number;
  storeTimestamp: string;
  storeHostAddress: string;
  storeHostPort: number;
  reconsumeTimes: number;
  preparedTransactionOffset: string;
  bodyCRC: number;
  storeSize: number;
  properties?: Record<string, string>;
  bodyHex?: string;
  msgId: string;
  offsetMsgId: string;
  tags?: string;
  keys?: string;
}

export interface MessageVectors {
  records: { name: string; description: string; hex: string; decoded: JavaMessageView }[];
  pullBody: { name: string; description: string; hex: string; decodedList: JavaMessageView[] };
  /** A good record followed by a damaged one, as MessageDecoder.decodes reads them. */
  damaged: {
    name: string;
    description: string;
    hex: string;
    records: number;
    goodRecords: number;
    decodedList?: JavaMessageView[];
    javaError?: string;
  }[];
}

export interface BatchVector {
  name: string;
  description: string;
  hex: string;
  messages: {
    topic: string;
    flag: number;
    bodyHex: string;
    properties: [string, string][];
    propertiesString: string;
  }[];
  decoded: { flag: number; bodyHex: string; properties: Record<string, string> }[];
}

export interface BodyVector {
  name: string;
  description: string;
  text: string;
  hex: string;
  fields?: unknown;
}

export interface HashMapOrderVector {
  initialCapacity: number;
  insertionOrder: string[];
  iterationOrder: string[];
}

export interface AclVector {
  name: string;
  accessKey: string;
  secretKey: string;
  securityToken?: string;
  extFields: Record<string, string>;
  bodyHex: string;
  signature: string;
  signedExtFields: Record<string, string>;
}
