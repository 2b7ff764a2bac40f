// `rocketwire bench`: the benchmark harness lives in bench/harness/ (it reaches into
// test/interop and needs the devDependency ali-ons, so it is not published). In a clone, built by
// `npx tsc -p tsconfig.json`, it is dist/bench/harness/command.js and this module hands the command
// over to it; in an installed package that file is absent and the command says it needs a clone.
import { fileURLToPath } from 'node:url';
import { CliError, type CliCommand } from './common.js';

// dist/lib/cli/bench.js → dist/bench/harness/command.js
const HARNESS = new URL('../../bench/harness/command.js', import.meta.url);

const NEEDS_A_CLONE =
  'the benchmarks run from a clone of the rocketwire repository (npm ci && npm run bench); they are not part of the installed package';

async function harness(): Promise<CliCommand | null> {
  try {
    return ((await import(HARNESS.href)) as { command: CliCommand }).command;
  } catch (err) {
    // Only the harness itself missing means "installed package"; any other failure is a bug to show.
    if (
      (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' &&
      String((err as Error).message).includes(fileURLToPath(HARNESS))
    )
      return null;
    throw err;
  }
}

export const command: CliCommand = (await harness()) ?? {
  summary: 'measure throughput, latency and memory (needs a clone of the repository)',
  usage: `usage: rocketwire bench [options]\n\n${NEEDS_A_CLONE}.\n`,
  run: () => Promise.reject(new CliError(NEEDS_A_CLONE, 2)),
};
