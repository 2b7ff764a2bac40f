import { RocketwireError } from '../../protocol/index.js';

/** A client-side failure that is not a broker answer (no route, group clash, no name server). */
export class MQClientError extends RocketwireError {}

/** Every configured name server failed; `failures` has one entry per address tried, in order. */
export class NameServerUnavailableError extends MQClientError {
  readonly failures: { addr: string; error: Error }[];
  constructor(failures: { addr: string; error: Error }[]) {
    const what = failures.map((f) => `${f.addr}: ${firstLine(f.error.message)}`).join('; ');
    super(`no name server answered (${what})`, { cause: failures[failures.length - 1]?.error });
    this.failures = failures;
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? s;
}
