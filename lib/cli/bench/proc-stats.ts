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
