import { ProtocolError } from '../errors.js';

/** Small readers that check the shape of a parsed JSON body and name the path that is wrong. */
export type Obj = Record<string, unknown>;

export function bodyError(path: string, msg: string): ProtocolError {
  return new ProtocolError(`JSON body: ${path} ${msg}`, 0);
}

export function asObject(v: unknown, path: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw bodyError(path, 'is not an object');
  return v as Obj;
}
export function asArray(v: unknown, path: string): unknown[] {
  if (v == null) return [];
  if (!Array.isArray(v)) throw bodyError(path, 'is not an array');
  return v;
}
export function reqString(o: Obj, key: string, path: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw bodyError(`${path}.${key}`, 'is not a string');
  return v;
}
export function optString(o: Obj, key: string, path: string): string | undefined {
  const v = o[key];
  if (v == null) return undefined;
  if (typeof v !== 'string') throw bodyError(`${path}.${key}`, 'is not a string');
  return v;
}
export function reqNumber(o: Obj, key: string, path: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bodyError(`${path}.${key}`, 'is not a number');
  return v;
}
export function optNumber(o: Obj, key: string, path: string, dflt: number): number {
  const v = o[key];
  if (v == null) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bodyError(`${path}.${key}`, 'is not a number');
  return v;
}
export function optBoolean(o: Obj, key: string, path: string, dflt: boolean): boolean {
  const v = o[key];
  if (v == null) return dflt;
  if (typeof v !== 'boolean') throw bodyError(`${path}.${key}`, 'is not a boolean');
  return v;
}
export function stringArray(v: unknown, path: string): string[] {
  return asArray(v, path).map((x, i) => {
    if (typeof x !== 'string') throw bodyError(`${path}[${i}]`, 'is not a string');
    return x;
  });
}
