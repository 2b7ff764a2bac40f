import { toJavaJson } from '../json/java-json.js';
import { parseFastjsonBody } from '../json/fastjson-parse.js';
import type { Connection } from './admin-tools-bodies.js';
import { asArray, asObject, optNumber, optString, reqString } from './shape.js';

/**
 * Bodies of the operator requests beside mqadmin's reads: producer connections and the broker
 * config's properties text.
 */

/** GET_PRODUCER_CONNECTION_LIST (204) response body, `ProducerConnection`: `{"connectionSet":[Connection…]}`. */
export interface ProducerConnection {
  connectionSet: Connection[];
}
export function encodeProducerConnection(c: ProducerConnection): Buffer {
  const connectionSet = c.connectionSet.map((x) => ({
    clientAddr: x.clientAddr,
    clientId: x.clientId,
    language: x.language,
    version: x.version,
  }));
  return Buffer.from(toJavaJson({ connectionSet }), 'utf8');
}
export function decodeProducerConnection(body: Buffer | Uint8Array): ProducerConnection {
  const p = 'ProducerConnection';
  const o = asObject(parseFastjsonBody(body), p);
  return {
    connectionSet: asArray(o.connectionSet, `${p}.connectionSet`).map((v, i): Connection => {
      const path = `${p}.connectionSet[${i}]`;
      const c = asObject(v, path);
      return {
        clientId: reqString(c, 'clientId', path),
        clientAddr: optString(c, 'clientAddr', path) ?? '',
        language: optString(c, 'language', path) ?? 'JAVA',
        version: optNumber(c, 'version', path, 0),
      };
    }),
  };
}
export const ProducerConnection = { encode: encodeProducerConnection, decode: decodeProducerConnection } as const;

/**
 * GET_BROKER_CONFIG (26) response body and UPDATE_BROKER_CONFIG (25) request body: a Java
 * properties text. Java writes it with MixAll.properties2String (`key=value\n` per entry, keys
 * sorted, nothing escaped) and reads it with java.util.Properties#load; this reads what Properties
 * reads in such text: `#` and `!` comment lines, `=`, `:` or blanks between key and value, blanks
 * around them, backslash line continuations and the \t \n \r \f \uXXXX escapes.
 */
export function encodePropertiesText(props: Readonly<Record<string, string>>): Buffer {
  const keys = Object.keys(props).sort();
  return Buffer.from(keys.map((k) => `${k}=${props[k]}\n`).join(''), 'utf8');
}
export function decodePropertiesText(body: Buffer | Uint8Array): Record<string, string> {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const out: Record<string, string> = {};
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.replace(/^[ \t\f]+/, '');
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    // an odd number of trailing backslashes continues the line on the next one
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < lines.length) {
      line = line.slice(0, -1) + lines[++i]!.replace(/^[ \t\f]+/, '');
    }
    let k = 0;
    while (k < line.length && !/[=: \t\f]/.test(line[k]!)) k += line[k] === '\\' ? 2 : 1;
    const key = unescapeJava(line.slice(0, k));
    let rest = line.slice(k).replace(/^[ \t\f]*/, '');
    if (rest.startsWith('=') || rest.startsWith(':')) rest = rest.slice(1).replace(/^[ \t\f]*/, '');
    out[key] = unescapeJava(rest);
  }
  return out;
}
function unescapeJava(s: string): string {
  return s.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, c: string) => {
    if (c.length === 5) return String.fromCharCode(parseInt(c.slice(1), 16));
    return c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : c === 'f' ? '\f' : c;
  });
}
export const BrokerConfigProperties = { encode: encodePropertiesText, decode: decodePropertiesText } as const;
