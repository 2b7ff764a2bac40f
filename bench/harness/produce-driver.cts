/**
 * How the Node producers of `rocketwire bench --produce-vs` keep their sends in flight: one driver
 * for rocketwire (in the bench process) and for ali-ons (ali-ons-peer.cts, a CommonJS process), so
 * that both sides are driven alike. CommonJS so that the ali-ons peer can require it; the bench
 * imports it as an ES module.
 */

/** sync: `inFlight` loops, each awaiting one send; async: a window of `inFlight` sends, each answer starting the next; batch: `inFlight` loops, each awaiting a batch of `batch`. */
export interface DriveMode {
  kind: 'sync' | 'async' | 'batch';
  inFlight: number;
  batch: number;
}

export interface DriveResult {
  acked: number;
  failed: number;
  /** performance.now() of the first and the last acknowledgement. */
  firstAt: number;
  lastAt: number;
  /** Messages the first acknowledgement covered (1, or the batch size). */
  firstCount: number;
  firstError: Error | null;
}

export function newDriveResult(): DriveResult {
  return { acked: 0, failed: 0, firstAt: 0, lastAt: 0, firstCount: 0, firstError: null };
}

/**
 * Sends messages `first` … `first + count - 1` with `send(index, n)` (n messages from index: 1
 * unless batching) and counts the acknowledgements. Gives up after 1 % of them (at least 100)
 * failed, as the consumer bench's produce phase does. `r` is updated as answers come, so a caller
 * can report progress from it.
 */
export function driveSends(
  count: number,
  first: number,
  mode: DriveMode,
  send: (index: number, n: number) => Promise<unknown>,
  r: DriveResult = newDriveResult(),
): Promise<DriveResult> {
  const end = first + count;
  const limit = Math.max(100, count / 100);
  let next = first;
  const ack = (n: number): void => {
    const now = performance.now();
    if (r.firstAt === 0) {
      r.firstAt = now;
      r.firstCount = n;
    }
    r.lastAt = now;
    r.acked += n;
  };
  const fail = (n: number, err: unknown): void => {
    r.failed += n;
    r.firstError ??= err instanceof Error ? err : new Error(String(err));
  };
  if (mode.kind === 'async') {
    // The callback style of Java's send(msg, callback) under a Semaphore: no loop awaits a send,
    // each answer starts the next one.
    return new Promise((resolve) => {
      let inFlight = 0;
      const launch = (): void => {
        while (inFlight < mode.inFlight && next < end && r.failed <= limit) {
          const i = next++;
          inFlight++;
          send(i, 1).then(
            () => {
              inFlight--;
              ack(1);
              launch();
            },
            (err: unknown) => {
              inFlight--;
              fail(1, err);
              launch();
            },
          );
        }
        if (inFlight === 0) resolve(r);
      };
      launch();
    });
  }
  const per = mode.kind === 'batch' ? mode.batch : 1;
  const loop = async (): Promise<void> => {
    while (next < end && r.failed <= limit) {
      const i = next;
      const n = Math.min(per, end - i);
      next += n;
      try {
        await send(i, n);
        ack(n);
      } catch (err) {
        fail(n, err);
      }
    }
  };
  return Promise.all(Array.from({ length: Math.max(1, mode.inFlight) }, loop)).then(() => r);
}

/** Body `index`: its number in the first 8 bytes (big-endian), then the template's bytes, as the consumer bench's bodies. */
export function benchBody(index: number, template: Buffer): Buffer {
  const b = Buffer.allocUnsafe(template.length);
  template.copy(b);
  b.writeUInt32BE(Math.floor(index / 0x1_0000_0000), 0);
  b.writeUInt32BE(index >>> 0, 4);
  return b;
}

/** The filler of every bench body of `size` bytes (at least 8). */
export function benchTemplate(size: number): Buffer {
  return Buffer.alloc(Math.max(size, 8), 'rocketwire-bench-');
}
