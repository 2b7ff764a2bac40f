import * as fs from 'node:fs';
import * as os from 'node:os';

/** The machine a bench ran on, as its reports print it. */
export interface BenchMachine {
  cpus: number;
  cpuModel: string;
  memoryGb: number;
  node: string;
  platform: string;
}

export function benchMachine(): BenchMachine {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.versions.node,
    platform: `${os.platform()} ${os.release()}`,
  };
}

/** A "Vm…: N kB" line of a live process's /proc status, in MiB; 0 where /proc cannot tell. */
function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Peak resident set size (VmHWM) of a live process, in MiB; 0 where /proc cannot tell. */
export function peakRssMb(pid: number): number {
  return statusMb(pid, 'VmHWM');
}

/** Resident set size now (VmRSS) of a live process, in MiB; 0 where /proc cannot tell. */
export function rssMb(pid: number): number {
  return statusMb(pid, 'VmRSS');
}

/** The largest RSS seen while each tenth of a run's messages was handled, in MiB. */
export class TenthPeaks {
  private readonly mb: number[] = new Array<number>(10).fill(0);

  /** `mb` was sampled when `done` of `total` messages were handled. */
  note(done: number, total: number, mb: number): void {
    const tenth = Math.min(9, Math.floor((done * 10) / Math.max(1, total)));
    if (mb > this.mb[tenth]!) this.mb[tenth] = mb;
  }

  /** The ten peaks to a tenth of a MiB (0 for a tenth no sample fell in); with others, the largest of each tenth. */
  rounded(...others: TenthPeaks[]): number[] {
    return this.mb.map((mb, i) => Math.round(Math.max(mb, ...others.map((o) => o.mb[i]!)) * 10) / 10);
  }
}

/** User + system CPU time of a live process, in ms; 0 where /proc cannot tell. */
export function cpuMs(pid: number): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 Hz on Linux).
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}
