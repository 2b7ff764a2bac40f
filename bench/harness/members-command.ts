/**
 * `rocketwire bench --curve members [--simulated]` (members.ts, members-sim.ts): the option parsing,
 * the broker, the table, the chart.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CliError, UsageError, intOption, parseOptions, stringOption, type CliIO } from '../../lib/cli/common.js';
import { startChildBroker } from './embedded.js';
import { capLine, membersSvg, membersTable, runMembersCurve } from './members.js';
import {
  processCpuMs,
  runSimulatedMembers,
  simulatedTable,
  type HeartbeatCounts,
  type SimOptions,
  type SimPoint,
} from './members-sim.js';
import { renderCurveSvg } from './chart.js';
import { benchMachine } from './proc-stats.js';

export const MEMBERS_USAGE = `Group members curve (bench/harness/members.ts, members-sim.ts):
  --curve members       N consumer processes in one group on one topic of --queues queues (default
                        16), each point consuming --messages (default 100000) from the first offset
                        with a new group; --vs java: as many Java consumers. Reports the total rate,
                        each process's share, where the total stops growing (the cores' cap)
  --points LIST         default 1,2,3,4,6,8 (with --simulated 1,10,100,300,1000)
  --simulated           instead: N members as client instances spread over --hosts processes
                        (default 2), each its own clientId and connections, on a topic of max(8, N)
                        queues: convergence after start, after one member joins and after it
                        leaves, duplicates meanwhile (messages flow at --rate per second, default
                        1000), heartbeat bytes per second over one --heartbeat-ms interval (default
                        30000; the embedded broker runs in a child process that answers its
                        counters), RSS per member, fds per host. --heartbeat-v2 for V2 heartbeats;
                        --broker-pid PID: the broker's CPU (a broker on --namesrv)
`;

/** Whether argv asks for the members curve (dispatched before the bench's own option parsing). */
export function isMembersCurve(argv: string[]): boolean {
  const i = argv.indexOf('--curve');
  return (i >= 0 && argv[i + 1] === 'members') || argv.includes('--curve=members');
}

export async function runMembersCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions(argv, {
    curve: { type: 'string' },
    namesrv: { type: 'string' },
    points: { type: 'string' },
    messages: { type: 'string' },
    size: { type: 'string' },
    queues: { type: 'string' },
    vs: { type: 'string' },
    simulated: { type: 'boolean' },
    hosts: { type: 'string' },
    'heartbeat-ms': { type: 'string' },
    'heartbeat-v2': { type: 'boolean' },
    rate: { type: 'string' },
    'hold-ms': { type: 'string' },
    'phase-timeout': { type: 'string' },
    'broker-pid': { type: 'string' },
    'stall-timeout': { type: 'string' },
    json: { type: 'boolean' },
    chart: { type: 'string' },
  });
  const str = (k: string): string | undefined => stringOption(values, k);
  const simulated = values.simulated === true;
  const points = (str('points') ?? (simulated ? '1,10,100,300,1000' : '1,2,3,4,6,8'))
    .split(',')
    .map((p) => intOption('points', p.trim(), 1, 1, simulated ? 5000 : 64));
  const vs = (str('vs') ?? '').split(',').filter(Boolean);
  if (vs.some((p) => p !== 'java')) throw new UsageError('--curve members compares with --vs java only');
  if (simulated && vs.length > 0) throw new UsageError('--simulated runs rocketwire members only (no --vs)');
  const log = (line: string) => io.stderr.write(line + '\n');
  const prefix = `rw_members_${Date.now().toString(36)}`;
  if (simulated) return simulatedCommand(str, values, points, prefix, log, io);

  const messages = intOption('messages', str('messages'), 100_000, 1, 10_000_000);
  const queues = intOption('queues', str('queues'), 16, 1, 1024);
  const namesrv = str('namesrv');
  const child = namesrv ? null : await startChildBroker(queues);
  try {
    const label = child ? `embedded (child process, ${child.broker})` : `name server ${namesrv}`;
    const result = await runMembersCurve({
      namesrv: namesrv ?? child!.namesrv,
      points,
      messages,
      size: intOption('size', str('size'), 1024, 8, 4 * 1024 * 1024),
      queues,
      java: vs.includes('java'),
      prefix,
      stallTimeoutMs: intOption('stall-timeout', str('stall-timeout'), 60, 1, 3600) * 1000,
      log,
    });
    const chart = str('chart');
    if (chart) fs.writeFileSync(chart, membersSvg(result, `consume throughput by group members, broker ${label}`));
    io.stdout.write(
      values.json
        ? JSON.stringify({ axis: 'members', broker: label, machine: benchMachine(), queues, points: result }) + '\n'
        : membersTable(result) + capLine(result),
    );
    const short = result.filter((p) => !p.rocketwire.complete || (p.java && !p.java.complete));
    if (short.length > 0)
      throw new CliError(`points not consumed completely: ${short.map((p) => p.processes).join(', ')}`);
    return 0;
  } finally {
    await child?.stop();
  }
}

async function simulatedCommand(
  str: (k: string) => string | undefined,
  values: Record<string, unknown>,
  points: number[],
  prefix: string,
  log: (line: string) => void,
  io: CliIO,
): Promise<number> {
  for (const k of ['messages', 'queues', 'size', 'vs'])
    if (str(k) !== undefined) throw new UsageError(`--${k} belongs to the process curve, not to --simulated`);
  const namesrv = str('namesrv');
  const brokerPid = str('broker-pid') === undefined ? undefined : intOption('broker-pid', str('broker-pid'), 0, 1);
  // In a process of its own that answers its HEART_BEAT counters (members-broker.ts).
  const broker = namesrv ? null : await startMembersBroker();
  try {
    const o: SimOptions = {
      namesrv: namesrv ?? broker!.namesrv,
      points,
      hosts: intOption('hosts', str('hosts'), 2, 1, 64),
      heartbeatIntervalMs: intOption('heartbeat-ms', str('heartbeat-ms'), 30_000, 100, 600_000),
      useHeartbeatV2: values['heartbeat-v2'] === true,
      rate: intOption('rate', str('rate'), 1000, 1, 100_000),
      holdMs: intOption('hold-ms', str('hold-ms'), 1000, 0, 60_000),
      phaseTimeoutMs: intOption('phase-timeout', str('phase-timeout'), 60, 1, 3600) * 1000,
      prefix,
      log,
    };
    if (broker) {
      o.brokerHeartbeats = broker.heartbeats;
      o.brokerCpuMs = processCpuMs(broker.pid);
    } else if (brokerPid) o.brokerCpuMs = processCpuMs(brokerPid);
    const label = broker ? 'embedded (child process)' : `name server ${namesrv}`;
    const result = await runSimulatedMembers(o);
    const chart = str('chart');
    if (chart) fs.writeFileSync(chart, simulatedSvg(result, `group convergence by members, broker ${label}`));
    io.stdout.write(
      values.json
        ? JSON.stringify({
            axis: 'members-simulated',
            broker: label,
            machine: benchMachine(),
            heartbeatV2: o.useHeartbeatV2,
            points: result,
          }) + '\n'
        : simulatedTable(result),
    );
    const bad = result.filter(
      (p) =>
        p.failed !== undefined || !p.start.converged || !p.join.converged || !p.leave.converged || p.unique < p.sent,
    );
    if (bad.length > 0)
      throw new CliError(`points that did not converge or lost messages: ${bad.map((p) => p.members).join(', ')}`);
    return 0;
  } finally {
    await broker?.stop();
  }
}

interface MembersBroker {
  namesrv: string;
  pid: number;
  heartbeats: () => Promise<HeartbeatCounts>;
  stop: () => Promise<void>;
}

async function startMembersBroker(): Promise<MembersBroker> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'members-broker.js');
  const proc = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  const closed = new Promise<void>((resolve) => proc.once('close', () => resolve()));
  const ready = await Promise.race([next(), closed.then(() => null)]);
  if (ready === null) throw new CliError('the embedded broker of the members curve did not start');
  const { namesrv } = JSON.parse(ready) as { namesrv: string };
  return {
    namesrv,
    pid: proc.pid!,
    heartbeats: async () => {
      const answer = next();
      proc.stdin!.write('hb\n');
      return JSON.parse(await answer) as HeartbeatCounts;
    },
    stop: async () => {
      proc.stdin!.end();
      const kill = setTimeout(() => proc.kill('SIGKILL'), 30_000);
      await closed;
      clearTimeout(kill);
    },
  };
}

export function simulatedSvg(points: SimPoint[], title: string): string {
  return renderCurveSvg(title, 'members in the group', 'ms to converge', [
    { name: 'after a join', points: points.map((p) => [p.members, p.join.ms]) },
    { name: 'after a leave', points: points.map((p) => [p.members, p.leave.ms]) },
  ]);
}
