const TWO_32 = 4294967296;

// Big-endian int64 fields (offsets, timestamps, tag codes) kept as JS numbers: every such value a
// store writes is a safe integer, far below 2^53, so no BigInt is allocated per field.

/** Write the safe integer `n` as a big-endian int64 (two's complement for negatives) at `pos`. */
export function writeInt64(b: Buffer, pos: number, n: number): void {
  const hi = Math.floor(n / TWO_32);
  b.writeInt32BE(hi, pos);
  b.writeUInt32BE(n - hi * TWO_32, pos + 4);
}

/**
 * The big-endian int64 at `pos` as a number. Narrowing point: only for fields whose writer keeps
 * them below 2^53 (a store's own offsets and timestamps); decodeMessages checks the range instead.
 */
export function readInt64(b: Buffer, pos: number): number {
  return b.readInt32BE(pos) * TWO_32 + b.readUInt32BE(pos + 4);
}
