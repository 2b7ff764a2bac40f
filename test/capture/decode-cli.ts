import { PassThrough, Readable } from 'node:stream';
import { main } from '../../lib/cli/main.js';

export interface DecodeRun {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Runs `rocketwire decode <args>` in this process; stdout as bytes (the output tests compare bytes). */
export async function decodeCli(args: string[], stdin: Buffer | Readable = Buffer.alloc(0)): Promise<DecodeRun> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on('data', (b: Buffer) => out.push(b));
  stderr.on('data', (b: Buffer) => err.push(b));
  const input = Buffer.isBuffer(stdin) ? Readable.from([stdin]) : stdin;
  const code = await main(['decode', ...args], { stdin: input, stdout, stderr });
  return { code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString() };
}
