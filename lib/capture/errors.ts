import { OptionError, RocketwireError } from '../../protocol/errors.js';

/**
 * A CaptureDecoderOptions value outside its range; `option` names it.
 * @category Capture
 */
export class CaptureOptionError extends OptionError {
  override readonly name = 'CaptureOptionError';
  override readonly errorCode = 'ERR_CAPTURE_OPTION';
  /** The option's lowest valid value. */
  readonly limit: number;
  constructor(option: string, value: unknown, limit: number) {
    super(option, `capture decoder option ${option} must be an integer >= ${limit}, got ${String(value)}`);
    this.limit = limit;
  }
}

/** A filter term could not be understood. */
export class FilterSyntaxError extends RocketwireError {
  override readonly name = 'FilterSyntaxError';
  override readonly errorCode = 'ERR_CAPTURE_FILTER';
}

/** Bad hex text. `offset` is the character position in the input. */
export class HexInputError extends RocketwireError {
  override readonly name = 'HexInputError';
  override readonly errorCode = 'ERR_HEX_INPUT';
  readonly offset: number;
  /** Bytes decoded from the chunk before the bad character: they are still good input. */
  readonly decoded: Buffer;
  constructor(message: string, offset: number, decoded: Buffer = Buffer.alloc(0)) {
    super(message);
    this.offset = offset;
    this.decoded = decoded;
  }
}

/** A DoctorOptions value outside its range; `option` names it. */
export class DoctorOptionError extends OptionError {
  override readonly name = 'DoctorOptionError';
  override readonly errorCode = 'ERR_DOCTOR_OPTION';
  constructor(option: string, message: string) {
    super(option, `doctor option ${option}: ${message}`);
  }
}

/**
 * A capture object used after its end: a CaptureDoctor fed after `finish()`, a report file
 * committed twice. A mistake in the calling code, never in the capture.
 */
export class CaptureStateError extends RocketwireError {
  override readonly name = 'CaptureStateError';
  override readonly errorCode = 'ERR_CAPTURE_STATE';
}

/**
 * A worker thread of a parallel decode (`decode --workers N`) stopped before the end of the
 * capture without an error of its own (killed, or out of memory); `exitCode` is its exit code.
 */
export class CaptureWorkerError extends RocketwireError {
  override readonly name = 'CaptureWorkerError';
  override readonly errorCode = 'ERR_CAPTURE_WORKER';
  readonly exitCode: number;
  constructor(exitCode: number) {
    super(`a decode worker thread stopped before the end of the capture (exit code ${exitCode})`);
    this.exitCode = exitCode;
  }
}
