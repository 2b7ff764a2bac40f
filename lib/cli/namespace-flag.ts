import { resolveNamespace } from '../client/index.js';
import { UsageError } from './common.js';

/** `--namespace NS`, checked as the clients' `namespace` option is; a bad one is a one-line usage error naming the flag. */
export function cliNamespace(value: string | undefined): string | undefined {
  try {
    return resolveNamespace(value, '--namespace');
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
