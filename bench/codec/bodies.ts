/** What the codec benchmarks share: their numeric options and the JSON-ish body they compress. */

/** `--name N` from the command line, or `dflt`. */
export function numberOption(name: string, dflt: number): number {
  const args = process.argv.slice(2);
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : dflt;
}

/**
 * `bytes` of a JSON array of order records as a service would send them: repeated keys, varied
 * values (the array cut at `bytes`).
 */
export function jsonBody(bytes: number): Buffer {
  const parts: string[] = [];
  let length = 2;
  for (let i = 0; length < bytes + 1; i++) {
    const item = JSON.stringify({
      id: i,
      orderId: `ORD-${100000 + i * 7}`,
      user: { name: `user${i % 97}`, email: `user${i % 97}@example.com` },
      amount: ((i * 13.37) % 1000).toFixed(2),
      status: ['NEW', 'PAID', 'SHIPPED'][i % 3],
      ts: 1733300000000 + i * 1234,
    });
    length += item.length + (parts.length > 0 ? 1 : 0);
    parts.push(item);
  }
  return Buffer.from(`[${parts.join(',')}]`).subarray(0, bytes);
}
