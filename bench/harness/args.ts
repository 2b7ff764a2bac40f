import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * `parseArgs` for a bench script: an unknown or malformed option prints one line naming the script
 * and exits 2, as the `rocketwire` command does, instead of a stack trace.
 */
export function benchArgs<T extends ParseArgsConfig>(script: string, config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    process.stderr.write(`${script}: ${(err as Error).message}\n`);
    process.exit(2);
  }
}
