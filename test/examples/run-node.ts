// Runs a user's program (an example script, the README's first program) in a child Node process, as
// a user would run it, and collects what it printed. Shared by test/examples and test/docs.
import { spawn } from 'node:child_process';

export interface NodeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * `node <file>` with `env` added to this process's environment (DEBUG removed, so that tracing
 * switched on for the test does not reach the program's stderr). Killed after `killAfterMs`: only a
 * safety net for a program that hangs, which the caller then sees as `signal: 'SIGKILL'`.
 */
export function runNode(file: string, opts: { cwd: string; env?: NodeJS.ProcessEnv; killAfterMs: number }): Promise<NodeRun> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
    delete env.DEBUG;
    const child = spawn(process.execPath, [file], { cwd: opts.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const killer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
