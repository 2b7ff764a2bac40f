// The other client of bench/hostile: a child process that asks the broker one cheap question
// (GET_MAX_OFFSET of a topic) after another, one in flight, and records each round trip in the
// window it started in. It runs apart from the attacker so that only the broker's stalls are
// measured, not the time the attacker spends building its frames.
//
// stdin lines: "begin NAME" opens a window, "end" closes it, "quit" waits for the request in
// flight, prints one JSON line {"windows":{NAME:{samples,p50Ms,p99Ms,maxMs}}} and exits.
// stdout's first line is {"ready":true} once the first answer came.
import { performance } from 'node:perf_hooks';
import * as readline from 'node:readline';
import { RequestCode, createRequest } from '../../protocol/index.js';
import { RemotingClient } from '../../lib/remoting/index.js';

export interface CanaryWindow {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function summarize(rtts: number[]): CanaryWindow {
  const s = [...rtts].sort((a, b) => a - b);
  const at = (q: number): number => (s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor(q * s.length))]!);
  const round = (v: number): number => Math.round(v * 100) / 100;
  return {
    samples: s.length,
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    maxMs: round(s.length ? s[s.length - 1]! : 0),
  };
}

async function main(): Promise<void> {
  const addr = process.argv[2];
  if (!addr) throw new Error('usage: canary.js BROKER_ADDR');
  const client = new RemotingClient();
  const windows = new Map<string, number[]>();
  let current: number[] | null = null;
  let quitting = false;
  let ready = false;
  const request = () =>
    createRequest(RequestCode.GET_MAX_OFFSET, { extFields: { topic: 'HostileCanaryTopic', queueId: '0' } });
  const loop = (async () => {
    while (!quitting) {
      const into = current as number[] | null;
      const t0 = performance.now();
      await client.invoke(addr, request(), { timeoutMs: 120_000 }).catch(() => undefined);
      const rtt = performance.now() - t0;
      into?.push(rtt);
      if (!ready) {
        ready = true;
        process.stdout.write(JSON.stringify({ ready: true }) + '\n');
      }
      await new Promise((r) => setTimeout(r, 1));
    }
  })();
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const [cmd, name] = line.trim().split(/\s+/, 2);
    if (cmd === 'begin' && name) {
      current = [];
      windows.set(name, current);
    } else if (cmd === 'end') {
      current = null;
    } else if (cmd === 'quit') {
      break;
    }
  }
  quitting = true;
  await loop;
  await client.close();
  const out: Record<string, CanaryWindow> = {};
  for (const [name, rtts] of windows) out[name] = summarize(rtts);
  process.stdout.write(JSON.stringify({ windows: out }) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`canary: ${(err as Error).message}\n`);
  process.exit(1);
});
