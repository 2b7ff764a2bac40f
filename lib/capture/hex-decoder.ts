import { HexInputError } from './errors.js';

const NIBBLE = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) NIBBLE[0x30 + i] = i;
for (let i = 0; i < 6; i++) {
  NIBBLE[0x41 + i] = 10 + i;
  NIBBLE[0x61 + i] = 10 + i;
}

/** Streaming hex text → bytes; whitespace anywhere is ignored (so `xxd -p` output works). */
export class HexDecoder {
  private pending = -1;
  private chars = 0;

  /** Decode a chunk of text; throws HexInputError at the first character that is not hex or space. */
  push(text: Buffer): Buffer {
    const out = Buffer.allocUnsafe((text.length >> 1) + 1);
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      const v = NIBBLE[c]!;
      if (v < 0) {
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c) continue;
        this.chars += i;
        const shown = c >= 0x21 && c < 0x7f ? `"${String.fromCharCode(c)}"` : `0x${c.toString(16).padStart(2, '0')}`;
        throw new HexInputError(
          `hex input: unexpected character ${shown} at character ${this.chars}`,
          this.chars,
          out.subarray(0, n),
        );
      }
      if (this.pending < 0) this.pending = v;
      else {
        out[n++] = (this.pending << 4) | v;
        this.pending = -1;
      }
    }
    this.chars += text.length;
    return out.subarray(0, n);
  }

  /** End of text: an odd number of hex digits is an error. */
  end(): void {
    if (this.pending >= 0)
      throw new HexInputError(`hex input: odd number of hex digits (a lone digit at the end)`, this.chars);
  }
}
