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
 * switched on for the test does not reach the program's stderr). `signalAfter` sends a signal once
 * stdout matches. Killed after `killAfterMs`: only a safety net for a program that hangs, which the
 * caller then sees as `signal: 'SIGKILL'`.
 */
export function runNode(
  file: string,
  opts: {
    cwd: string;
    env?: NodeJS.ProcessEnv;
    killAfterMs: number;
    signalAfter?: { output: RegExp; signal: NodeJS.Signals };
  },
): Promise<NodeRun> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
    delete env.DEBUG;
    const child = spawn(process.execPath, [file], { cwd: opts.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      // As a process manager would: stop the program once it shows it is at work.
      if (opts.signalAfter && !signalled && opts.signalAfter.output.test(stdout)) {
        signalled = true;
        child.kill(opts.signalAfter.signal);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const killer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
