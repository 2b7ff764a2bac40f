/**
 * The root of every error rocketwire raises. Each class of protocol/ and lib/ gives itself a
 * literal `name` (stable under minification and bundling, so logs and `{ name }` matches keep
 * working); a subclass that declares none is named after its constructor.
 */
export class RocketwireError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * An option outside its range or of the wrong type; `option` names it. The message is the
 * subclass's own ("option X: …", "RemotingClient option X must be …").
 */
export class OptionError extends RocketwireError {
  override readonly name: string = 'OptionError';
  readonly option: string;
  constructor(option: string, message: string) {
    super(message);
    this.option = option;
  }
}

/*
 * Errors raised by the pure codec. Every malformed input ends in a ProtocolError (or a subclass),
 * never in a RangeError or TypeError escaping from a Buffer read.
 */

/** Bytes that do not follow the remoting protocol. `offset` is the byte position where the damage was found. */
export class ProtocolError extends RocketwireError {
  override readonly name: string = 'ProtocolError';
  readonly offset: number;
  constructor(message: string, offset: number, options?: { cause?: unknown }) {
    super(message, options);
    this.offset = offset;
  }
}

/** A header field that is missing or not in the format Java would parse. */
export class HeaderFieldError extends ProtocolError {
  override readonly name = 'HeaderFieldError';
  readonly field: string;
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(`header field "${field}": ${message}`, 0, options);
    this.field = field;
  }
}

/** A message body compressed with a codec this build cannot inflate. */
export class UnsupportedCompressionError extends ProtocolError {
  override readonly name = 'UnsupportedCompressionError';
  readonly codec: string;
  constructor(codec: string, offset: number, message?: string) {
    super(message ?? `message body compressed with ${codec}, which rocketwire cannot decompress`, offset);
    this.codec = codec;
  }
}

/** A subscription expression Java's FilterAPI refuses (an empty SQL92 expression, a tag list of only "||"). */
export class FilterExpressionError extends RocketwireError {
  override readonly name = 'FilterExpressionError';
}
