/**
 * CRC-32 with the zlib polynomial (0xEDB88320 reflected), as java.util.zip.CRC32 computes it.
 * Node 20 has no zlib.crc32 (it arrived in 20.15/22 only behind version checks), so we keep a
 * slicing-by-8 table version: the broker computes one per stored message.
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
      T[1792 + (a & 0xff)]! ^ T[1536 + ((a >>> 8) & 0xff)]! ^ T[1280 + ((a >>> 16) & 0xff)]! ^ T[1024 + (a >>> 24)]! ^
      T[768 + (b & 0xff)]! ^ T[512 + ((b >>> 8) & 0xff)]! ^ T[256 + ((b >>> 16) & 0xff)]! ^ T[b >>> 24]!;
    i += 8;
  }
  while (i < end) c = T[(c ^ bytes[i++]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** The BODYCRC a broker stores: CRC-32 of the stored body masked with 0x7FFFFFFF (UtilAll.crc32). */
export function messageBodyCrc(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return crc32(bytes, start, end) & 0x7fffffff;
}
