/**
 * Test helper of the doctor's live tests: tcpdump on the loopback interface around traffic the
 * test provokes, then the capture decoded and diagnosed. CI runs as root with tcpdump installed and
 * sets ROCKETWIRE_REQUIRE_JAVA: there the tests must run; elsewhere they skip without root or tcpdump.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CaptureDecoder } from '../../lib/capture/index.js';
import { CaptureDoctor, type DoctorOptions, type Finding } from '../../lib/capture/doctor/index.js';

const required = process.env.ROCKETWIRE_REQUIRE_JAVA !== undefined && process.env.ROCKETWIRE_REQUIRE_JAVA !== '';
const hasTcpdump = spawnSync('tcpdump', ['--version']).status === 0;
const root = process.getuid?.() === 0;

/** The tap `skip` option of a live doctor test. */
export const liveSkip: string | false =
  !required && (!hasTcpdump || !root)
    ? `tcpdump ${hasTcpdump ? 'needs root' : 'is not installed'} (set ROCKETWIRE_REQUIRE_JAVA to make this test mandatory)`
    : false;

function framesIn(file: string, ports: number[]): number {
  let n = 0;
  try {
    const dec = new CaptureDecoder({ frame: () => n++, problem: () => {} }, { ports });
    dec.push(readFileSync(file));
  } catch {
    return 0;
  }
  return n;
}

export interface Capture {
  /** Stops tcpdump once the file holds every frame sent so far. */
  stop(): Promise<void>;
}

/** tcpdump on lo for TCP on the given ports, writing `file`; resolves once it listens. */
export async function startCapture(file: string, ports: number[]): Promise<Capture> {
  const filter = [
    'tcp',
    'and',
    '(',
    ...ports.flatMap((p, i) => (i === 0 ? ['port', String(p)] : ['or', 'port', String(p)])),
    ')',
  ];
  // --immediate-mode and -U: every packet is written as it comes (see tcpdump.test.ts).
  // -B: a 16 MiB capture buffer, so that a burst of large answers on loopback is not dropped.
  const tcpdump = spawn(
    'tcpdump',
    ['-i', 'lo', '-n', '-U', '--immediate-mode', '-B', '16384', '-s', '0', '-w', file, ...filter],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  // Never left running by a test that times out.
  const killAtExit = (): void => void tcpdump.kill();
  process.once('exit', killAtExit);
  tcpdump.once('exit', () => process.off('exit', killAtExit));
  let err = '';
  await new Promise<void>((resolve, reject) => {
    tcpdump.stderr.on('data', (b: Buffer) => {
      err += b.toString();
      if (err.includes('listening on')) resolve();
    });
    tcpdump.once('exit', (code) => reject(new Error(`tcpdump exited with ${code}: ${err.trim()}`)));
  });
  return {
    async stop(): Promise<void> {
      // tcpdump may lag behind on a busy machine: wait until the frame count stops growing.
      let before = -1;
      for (let waited = 0; waited < 10_000; waited += 100) {
        const now = framesIn(file, ports);
        if (now === before && now > 0) break;
        before = now;
        await new Promise((r) => setTimeout(r, 100));
      }
      const exited = new Promise((r) => tcpdump.once('exit', r));
      tcpdump.kill('SIGINT');
      await exited;
    },
  };
}

/** The doctor's findings on a capture file, and how many frames it held. */
export function diagnoseFile(
  file: string,
  ports: number[],
  options?: DoctorOptions,
): { findings: Finding[]; frames: number } {
  const doctor = new CaptureDoctor(options);
  const dec = new CaptureDecoder({ frame: (f) => doctor.add(f), problem: () => {} }, { ports });
  dec.push(readFileSync(file));
  dec.end();
  const last = dec.lastPacketTs;
  return { findings: doctor.finish(last === null ? undefined : last * 1000), frames: doctor.frames };
}

/** "check group" pairs, sorted: what a test compares. */
export function found(findings: Finding[]): string[] {
  return findings.map((f) => `${f.check} ${f.evidence.group ?? '-'}`).sort();
}
