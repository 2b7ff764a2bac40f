import { RocketwireError } from '../../protocol/errors.js';

/** An error the CLI reports as one line (no stack) and an exit code. */
export class CliError extends RocketwireError {
  override readonly name: string = 'CliError';
  override readonly errorCode: string = 'ERR_CLI';
  readonly exitCode: number;
  constructor(message: string, exitCode = 1, options?: { cause?: unknown }) {
    super(message, options);
    this.exitCode = exitCode;
  }
}

/** Usage errors exit with 2. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  override readonly errorCode = 'ERR_CLI_USAGE';
  constructor(message: string) {
    super(message, 2);
  }
}
