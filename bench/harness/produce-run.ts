// One measured run of an in-process producer for `rocketwire bench --produce-vs` (rocketwire's
// Producer and the floor): the warm-up not measured, then the measured sends with a rate sample
// every 100 ms and the process's CPU over them.
import { driveSends, newDriveResult, type DriveMode } from './produce-driver.cjs';
import type { Series } from './run.js';

export interface MeasuredRun {
  msgsPerSec: number;
  acked: number;
  failed: number;
  seconds: number;
  /** CPU of this process over the measured sends, per message, in µs. */
  cpuUsPerMsg: number;
  ackedWithWarmup: number;
  error: string | null;
  series: Series;
}

/**
 * Sends `warmup` messages, then `messages` measured ones with `send`; the rate runs from the first
 * acknowledged send to the last. `onTick` hears the acknowledged count every 100 ms.
 */
export async function measureSends(
  o: { messages: number; warmup: number },
  mode: DriveMode,
  send: (index: number, n: number) => Promise<unknown>,
  seriesName: string,
  t0: number,
  onTick: (acked: number) => void = () => undefined,
): Promise<MeasuredRun> {
  const series: Series = { name: seriesName, points: [] };
  const w = o.warmup > 0 ? await driveSends(o.warmup, 0, mode, send) : newDriveResult();
  const r = newDriveResult();
  let last = 0;
  let lastT = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    series.points.push([(now - t0) / 1000, ((r.acked - last) * 1000) / (now - lastT)]);
    last = r.acked;
    lastT = now;
    onTick(r.acked);
  }, 100);
  const cpu0 = process.cpuUsage();
  try {
    await driveSends(o.messages, o.warmup, mode, send, r);
  } finally {
    clearInterval(timer);
  }
  const cpu = process.cpuUsage(cpu0);
  const seconds = (r.lastAt - r.firstAt) / 1000;
  return {
    msgsPerSec: seconds > 0 ? (r.acked - r.firstCount) / seconds : 0,
    acked: r.acked,
    failed: r.failed + w.failed,
    seconds,
    cpuUsPerMsg: r.acked > 0 ? (cpu.user + cpu.system) / r.acked : 0,
    ackedWithWarmup: r.acked + w.acked,
    error: (r.firstError ?? w.firstError)?.message ?? null,
    series,
  };
}
