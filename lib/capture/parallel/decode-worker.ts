// A worker of a parallel decode (parallel-decoder.ts): it owns the TCP flows the main thread sends
// it, decodes them with the same PacketDecoder and FramePrinter as a decode in one thread, and sends
// back what it printed, each piece keyed by its place in the capture (messages.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { newCaptureCounters, type DecodedFrame } from '../capture-options.js';
import type { FrameFilter } from '../frame-filter.js';
import { FramePrinter } from '../frame-printer.js';
import { OutputBuffer } from '../output-buffer.js';
import type { CaptureProblem, CapturedPacket } from '../packet.js';
import { PacketDecoder } from '../packet-decoder.js';
import {
  ITEM_BYTES,
  ITEM_PROBLEM,
  packetKey,
  PHASE_CLOCK,
  PHASE_OWNER,
  type BatchMessage,
  type EndMessage,
  type OutputMessage,
  type WorkerSetup,
} from './messages.js';

const setup = workerData as WorkerSetup;
const port = parentPort!;

let filter: FrameFilter | null = null;
if (setup.filterTerms.length > 0) {
  const f = new (await import('../frame-filter.js')).FrameFilter(setup.filterTerms);
  if (!f.empty) filter = f;
}
const msgpackEncode = setup.mode === 'msgpack' ? (await import('@msgpack/msgpack')).encode : null;

const out = new OutputBuffer();
const printer = new FramePrinter(out, setup.mode, filter, msgpackEncode);
let items: number[] = [];
let problems: CaptureProblem[] = [];
/** The place in the capture of what is printed now. */
let key = 0;
let sub = 0;

function item(kind: number, value: number): void {
  const n = items.length;
  if (kind === ITEM_BYTES && n > 0 && items[n - 2] === ITEM_BYTES && items[n - 4] === key && items[n - 3] === sub) {
    items[n - 1] = value; // the same place goes on printing
    return;
  }
  items.push(key, sub, kind, value);
}

const decoder = new PacketDecoder(
  {
    frame: (f: DecodedFrame) => {
      const before = out.length;
      printer.frame(f);
      if (out.length !== before) item(ITEM_BYTES, out.length);
    },
    problem: (p: CaptureProblem) => {
      item(ITEM_PROBLEM, problems.length);
      problems.push(p);
    },
  },
  setup.options,
  newCaptureCounters(),
  {
    flowClosing: (lastPacket) => {
      sub = lastPacket;
    },
  },
);

function reply(through: number): void {
  const pieces = out.takeDetached();
  const message: OutputMessage = { through, pieces, items: Float64Array.from(items), problems };
  const buffers = new Set<ArrayBuffer>();
  for (const p of pieces) buffers.add(p.buffer as ArrayBuffer);
  port.postMessage(message, [...buffers, message.items.buffer as ArrayBuffer]);
  items = [];
  problems = [];
}

function batch(m: BatchMessage): void {
  const data = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
  const { ts, own, first } = m;
  let o = 0;
  for (let i = 0; i < ts.length; i++) {
    const index = first + i;
    key = packetKey(index, PHASE_CLOCK);
    sub = 0;
    decoder.pass(index, ts[i]!);
    if (o < own.length && own[o] === index) {
      key = packetKey(index, PHASE_OWNER);
      sub = 0;
      const at = own[o + 1]!;
      const p: CapturedPacket = {
        index,
        ts: ts[i]!,
        linkType: own[o + 4]!,
        data: data.subarray(at, at + own[o + 2]!),
        origLen: own[o + 3]!,
        fileOffset: -1,
      };
      decoder.onPacket(p);
      o += 5;
    }
  }
  reply(first + ts.length - 1);
}

port.on('message', (m: BatchMessage | EndMessage) => {
  if (m.type === 'batch') return batch(m);
  key = m.endKey;
  sub = 0;
  decoder.endFlows();
  reply(Number.MAX_SAFE_INTEGER);
});
