/** xxHash32, used by the LZ4 frame format for its header, block and content checksums. */
const P1 = 0x9e3779b1 | 0;
const P2 = 0x85ebca77 | 0;
const P3 = 0xc2b2ae3d | 0;
const P4 = 0x27d4eb2f | 0;
const P5 = 0x165667b1 | 0;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}
function read32(b: Uint8Array, i: number): number {
  return b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
}
function round(acc: number, input: number): number {
  return Math.imul(rotl((acc + Math.imul(input, P2)) | 0, 13), P1);
}

/** xxh32 of b[start, end) with `seed`, as an unsigned 32-bit number. */
export function xxhash32(b: Uint8Array, start = 0, end = b.length, seed = 0): number {
  let i = start;
  const len = end - start;
  let h: number;
  if (len >= 16) {
    let v1 = (seed + P1 + P2) | 0;
    let v2 = (seed + P2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - P1) | 0;
    const limit = end - 16;
    while (i <= limit) {
      v1 = round(v1, read32(b, i));
      v2 = round(v2, read32(b, i + 4));
      v3 = round(v3, read32(b, i + 8));
      v4 = round(v4, read32(b, i + 12));
      i += 16;
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = (seed + P5) | 0;
  }
  h = (h + len) | 0;
  while (i + 4 <= end) {
    h = Math.imul(rotl((h + Math.imul(read32(b, i), P3)) | 0, 17), P4);
    i += 4;
  }
  while (i < end) {
    h = Math.imul(rotl((h + Math.imul(b[i]!, P5)) | 0, 11), P1);
    i++;
  }
  h ^= h >>> 15;
  h = Math.imul(h, P2);
  h ^= h >>> 13;
  h = Math.imul(h, P3);
  h ^= h >>> 16;
  return h >>> 0;
}
