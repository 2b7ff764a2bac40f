// bench/hostile: the attacks of docs/hardening.md measured as a user would feel them. For each attack on the
// broker, an embedded broker runs as a child process, a second child (canary.ts) asks it a cheap
// question after another, and the longest round trip while the attack runs is set beside the
// longest in an idle window of the same run: the excess is how long one hostile request held
// everybody else. For the consumer attack (zip bombs), each consumer kind runs in a child whose
// peak RSS is reported beside an idle consumer's of the same run.
//
//   node dist/bench/hostile/index.js [--runs 2] [--only sql-lex,sql-eval,…] [--json]
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { benchArgs } from '../harness/args.js';
import { ResponseCode, type RemotingCommand } from '../../protocol/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';
import { startChildBroker, type ChildBroker } from '../harness/embedded.js';
import { benchMachine } from '../harness/proc-stats.js';
import type { CanaryWindow } from './canary.js';
import { COMPRESSED_ZLIB, comparisonExpression, dashExpression, sendMessage, sqlPull, zlibBomb } from './attacks.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

interface Ctx {
  broker: ChildBroker;
  client: RemotingClient;
}

interface BrokerAttack {
  name: string;
  finding: string;
  brokerArgs: string[];
  setup?(ctx: Ctx): Promise<void>;
  /** The attack; resolves with what the attacker was answered (for the report). */
  run(ctx: Ctx): Promise<Record<string, unknown>>;
}

interface Canary {
  begin(name: string): void;
  end(): void;
  quit(): Promise<Record<string, CanaryWindow>>;
}

async function startCanary(addr: string): Promise<Canary> {
  const child: ChildProcess = spawn(process.execPath, [path.join(HERE, 'canary.js'), addr], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const it = lines[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done || !String(first.value).includes('ready')) throw new Error('canary did not start');
  return {
    begin: (name) => child.stdin!.write(`begin ${name}\n`),
    end: () => child.stdin!.write('end\n'),
    async quit() {
      child.stdin!.write('quit\n');
      const last = await it.next();
      lines.close();
      if (last.done) throw new Error('canary exited without a report');
      return (JSON.parse(String(last.value)) as { windows: Record<string, CanaryWindow> }).windows;
    },
  };
}

const SQL_TOPIC = 'HostileSql';
const SQL_ENTRIES = 800;

async function storeSqlMessages(ctx: Ctx): Promise<void> {
  for (let i = 0; i < SQL_ENTRIES; i++) {
    const res = await ctx.client.invoke(
      ctx.broker.broker,
      sendMessage(SQL_TOPIC, Buffer.from(`m${i}`), { properties: { a: String(i) } }),
    );
    if (res.code !== ResponseCode.SUCCESS) throw new Error(`send ${i}: ${res.code} ${res.remark}`);
  }
}

function answer(res: RemotingCommand): Record<string, unknown> {
  return {
    code: res.code,
    remark: (res.remark ?? '').slice(0, 160),
    nextBeginOffset: res.extFields?.nextBeginOffset,
    bodyBytes: res.body?.length ?? 0,
  };
}

/** Pull with `expr` from offset 0, following nextBeginOffset until the queue's end or `maxPulls`: what a hostile client repeats. */
async function sqlPulls(ctx: Ctx, expr: string, maxPulls: number): Promise<Record<string, unknown>> {
  let offset = 0;
  let pulls = 0;
  let last: RemotingCommand | undefined;
  while (pulls < maxPulls && offset < SQL_ENTRIES) {
    last = await ctx.client.invoke(ctx.broker.broker, sqlPull(SQL_TOPIC, expr, { offset }), { timeoutMs: 120_000 });
    pulls++;
    const next = Number(last.extFields?.nextBeginOffset ?? NaN);
    if (!Number.isFinite(next) || next <= offset) break;
    offset = next;
  }
  return { expressionBytes: expr.length, pulls, reachedOffset: offset, last: last ? answer(last) : null };
}

const brokerAttacks: BrokerAttack[] = [
  {
    name: 'sql-lex-default',
    finding: 'H1: one PULL with a 165 KB `a=----…1` expression, property filter off (the default)',
    brokerArgs: [],
    setup: storeSqlMessages,
    run: (ctx) => sqlPulls(ctx, dashExpression(), 1),
  },
  {
    name: 'sql-lex',
    finding: 'H1: the same PULL, property filter on',
    brokerArgs: ['--enable-property-filter'],
    setup: storeSqlMessages,
    run: (ctx) => sqlPulls(ctx, dashExpression(), 1),
  },
  {
    name: 'sql-eval',
    finding: 'H2: PULLs with an 852 KB balanced OR (65 536 comparisons) over 800 entries, property filter on',
    brokerArgs: ['--enable-property-filter'],
    setup: storeSqlMessages,
    run: (ctx) => sqlPulls(ctx, comparisonExpression(65_536), 50),
  },
  {
    name: 'sql-eval-at-limit',
    finding:
      'H2 within the default bounds: PULLs with a 1 024-comparison balanced OR (4 095 nodes, 17 KB) over 800 entries, property filter on',
    brokerArgs: ['--enable-property-filter'],
    setup: storeSqlMessages,
    run: (ctx) => sqlPulls(ctx, comparisonExpression(1024), 1000),
  },
];

interface StallResult {
  attack: string;
  finding: string;
  run: number;
  idle: CanaryWindow;
  attacked: CanaryWindow;
  /** attacked.maxMs − idle.maxMs: how much longer the worst wait of another client was. */
  excessMs: number;
  brokerPeakRssMb: number;
  attacker: Record<string, unknown>;
}

async function runBrokerAttack(a: BrokerAttack, run: number): Promise<StallResult> {
  const broker = await startChildBroker(4, 30_000, [], a.brokerArgs);
  const client = new RemotingClient();
  try {
    const ctx = { broker, client };
    await a.setup?.(ctx);
    const canary = await startCanary(broker.broker);
    canary.begin('idle');
    await new Promise((r) => setTimeout(r, 1500));
    canary.end();
    canary.begin('attack');
    const attacker = await a.run(ctx);
    await new Promise((r) => setTimeout(r, 100));
    canary.end();
    const w = await canary.quit();
    const idle = w.idle!;
    const attacked = w.attack!;
    return {
      attack: a.name,
      finding: a.finding,
      run,
      idle,
      attacked,
      excessMs: Math.round((attacked.maxMs - idle.maxMs) * 100) / 100,
      brokerPeakRssMb: Math.round(broker.rssMb()),
      attacker,
    };
  } finally {
    await client.close();
    await broker.stop();
  }
}

interface BombResult {
  mode: string;
  run: number;
  bombs: number;
  legit: number;
  /** The same consumer kind on a topic of the legitimate messages alone, in the same run. */
  baselinePeakRssMb: number;
  peakRssMb: number;
  killed: boolean;
  legitReceived: number;
  bombsHandedToTheApplication: number;
}

function runChild(args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(HERE, 'bomb-consumer.js'), ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve({ exit: code, ...(JSON.parse(line) as Record<string, unknown>) });
      } catch {
        reject(new Error(`bomb consumer exited ${code} without a report`));
      }
    });
  });
}

async function runBombAttack(mode: string, run: number, bombs: number, legit: number): Promise<BombResult> {
  const broker = await startChildBroker(4);
  const client = new RemotingClient();
  try {
    const bomb = zlibBomb();
    const send = async (req: RemotingCommand): Promise<void> => {
      const res = await client.invoke(broker.broker, req);
      if (res.code !== ResponseCode.SUCCESS) throw new Error(`send: ${res.code} ${res.remark}`);
    };
    // legitimate messages and bombs alternate over four queues; the baseline topic holds the legitimate ones alone
    for (let k = 0; k < Math.max(bombs, legit); k++) {
      if (k < legit) {
        await send(sendMessage('HostileBombs', Buffer.from(`legit ${k}`), { queueId: k % 4 }));
        await send(sendMessage('HostileBombsBaseline', Buffer.from(`legit ${k}`), { queueId: k % 4 }));
      }
      if (k < bombs) await send(sendMessage('HostileBombs', bomb, { queueId: k % 4, sysFlag: COMPRESSED_ZLIB }));
    }
    const legitCount = legit;
    const baseline = await runChild([mode, broker.namesrv, 'HostileBombsBaseline', String(legitCount)]);
    const attacked = await runChild([mode, broker.namesrv, 'HostileBombs', String(legitCount)]);
    return {
      mode,
      run,
      bombs,
      legit: legitCount,
      baselinePeakRssMb: Number(baseline.peakRssMb),
      peakRssMb: Number(attacked.peakRssMb),
      killed: attacked.killed === true,
      legitReceived: Number(attacked.legit),
      bombsHandedToTheApplication: Number(attacked.bombsHandled),
    };
  } finally {
    await client.close();
    await broker.stop();
  }
}

async function main(): Promise<void> {
  const { values } = benchArgs('hostile', {
    options: {
      runs: { type: 'string', default: '2' },
      only: { type: 'string' },
      bombs: { type: 'string', default: '64' },
      json: { type: 'boolean', default: false },
    },
  });
  const runs = Number(values.runs);
  const only = values.only ? new Set(values.only.split(',')) : null;
  const wanted = (name: string): boolean => only === null || only.has(name);
  const stalls: StallResult[] = [];
  const bombs: BombResult[] = [];
  for (const a of brokerAttacks) {
    if (!wanted(a.name)) continue;
    for (let run = 1; run <= runs; run++) {
      const r = await runBrokerAttack(a, run);
      stalls.push(r);
      if (!values.json) {
        process.stderr.write(
          `${a.name} run ${run}: another client's longest wait ${r.attacked.maxMs} ms (idle ${r.idle.maxMs} ms, excess ${r.excessMs} ms); broker peak RSS ${r.brokerPeakRssMb} MiB; attacker got ${JSON.stringify(r.attacker)}\n`,
        );
      }
    }
  }
  for (const mode of ['push', 'lite', 'pop']) {
    if (!wanted(`bomb-${mode}`) && !wanted('bomb')) continue;
    for (let run = 1; run <= runs; run++) {
      const r = await runBombAttack(mode, run, Number(values.bombs), 64);
      bombs.push(r);
      if (!values.json) {
        process.stderr.write(
          `bomb ${mode} run ${run}: peak RSS ${r.peakRssMb} MiB${r.killed ? ' (killed by the watchdog)' : ''} beside ${r.baselinePeakRssMb} MiB without bombs; ${r.legitReceived}/${r.legit} legitimate messages, ${r.bombsHandedToTheApplication} bombs handed to the application\n`,
        );
      }
    }
  }
  process.stdout.write(JSON.stringify({ machine: benchMachine(), stalls, bombs }, null, values.json ? 0 : 2) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/hostile: ${(err as Error).message}\n`);
  process.exit(1);
});
