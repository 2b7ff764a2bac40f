import { PassThrough } from 'node:stream';
import { main } from '../../lib/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `rocketwire <args>` in this process with captured text streams (fast; for commands that end by themselves). */
export async function runCli(args: string[]): Promise<CliRun> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await main(args, { stdin: new PassThrough(), stdout: out, stderr: err });
  return { code, stdout, stderr };
}
