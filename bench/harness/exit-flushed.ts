/**
 * End a bench child process once what it wrote to stdout has reached the pipe. `process.exit`
 * right after a write drops what the pipe has not taken yet (a pipe holds 64 KiB, and stdout to a
 * pipe is asynchronous on Linux): a group consumer's final line carries a bitmap of every message
 * number, 1.7 MB at 10 M messages, and was lost whole, so the bench saw a process "without a result".
 */
export function exitAfterStdout(code: number): void {
  process.stdout.write('', () => process.exit(code));
}
