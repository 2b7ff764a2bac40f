/**
 * Errors raised by the pure codec. Every malformed input ends in a ProtocolError (or a subclass),
 * never in a RangeError or TypeError escaping from a Buffer read.
 */
export class RocketwireError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bytes that do not follow the remoting protocol. `offset` is the byte position where the damage was found. */
export class ProtocolError extends RocketwireError {
  readonly offset: number;
  constructor(message: string, offset: number, options?: { cause?: unknown }) {
    super(message, options);
    this.offset = offset;
  }
}

/** A header field that is missing or not in the format Java would parse. */
export class HeaderFieldError extends ProtocolError {
  readonly field: string;
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(`header field "${field}": ${message}`, 0, options);
    this.field = field;
  }
}

/** A message body compressed with a codec this build cannot inflate. */
export class UnsupportedCompressionError extends ProtocolError {
  readonly codec: string;
  constructor(codec: string, offset: number, message?: string) {
    super(message ?? `message body compressed with ${codec}, which rocketwire cannot decompress`, offset);
    this.codec = codec;
  }
}
