import { createRequire } from 'node:module';

/**
 * CRC-32 with the zlib polynomial (0xEDB88320 reflected), as java.util.zip.CRC32 computes it.
 * zlib.crc32 only exists from Node 20.15 / 22.2, and we support every Node 20, so this module
 * has a slicing-by-8 table version and uses the native one when the runtime has it (the broker
 * computes one per stored message; native is several times faster).
 */
const T = new Int32Array(8 * 256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  T[n] = c;
}
for (let n = 0; n < 256; n++) {
  let c = T[n]!;
  for (let k = 1; k < 8; k++) {
    c = T[c & 0xff]! ^ (c >>> 8);
    T[k * 256 + n] = c;
  }
}

/** CRC-32 of bytes[start, end), as an unsigned 32-bit number. */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length, seed = 0): number {
  let c = ~seed;
  let i = start;
  const stop8 = end - ((end - start) & 7);
  while (i < stop8) {
    const a = (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)) ^ c;
    const b = bytes[i + 4]! | (bytes[i + 5]! << 8) | (bytes[i + 6]! << 16) | (bytes[i + 7]! << 24);
    c =
      T[1792 + (a & 0xff)]! ^
      T[1536 + ((a >>> 8) & 0xff)]! ^
      T[1280 + ((a >>> 16) & 0xff)]! ^
      T[1024 + (a >>> 24)]! ^
      T[768 + (b & 0xff)]! ^
      T[512 + ((b >>> 8) & 0xff)]! ^
      T[256 + ((b >>> 16) & 0xff)]! ^
      T[b >>> 24]!;
    i += 8;
  }
  while (i < end) c = T[(c ^ bytes[i++]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

type NativeCrc32 = (data: Uint8Array, value?: number) => number;
// node:zlib is required on the first CRC, not when the package is imported (import cost).
let nativeCrc32: NativeCrc32 | undefined | null = null;

/** CRC-32 of bytes[start, end): native zlib.crc32 when available, else the table version. */
export function fastCrc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  if (nativeCrc32 === null)
    nativeCrc32 = (createRequire(import.meta.url)('node:zlib') as { crc32?: NativeCrc32 }).crc32;
  if (nativeCrc32 !== undefined) {
    return nativeCrc32(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end)) >>> 0;
  }
  return crc32(bytes, start, end);
}

/** The BODYCRC a broker stores: CRC-32 of the stored body masked with 0x7FFFFFFF (UtilAll.crc32). */
export function messageBodyCrc(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return fastCrc32(bytes, start, end) & 0x7fffffff;
}
