/**
 * The root of every error rocketwire raises. Each class of protocol/ and lib/ gives itself a
 * literal `name` (stable under minification and bundling, so logs and `{ name }` matches keep
 * working); a subclass that declares none is named after its constructor.
 *
 * Each class also declares `errorCode`, a stable string (`ERR_…`) to match on instead of the
 * message, and `retriable`: whether the same call may succeed if made again (after a back-off, or
 * on another broker). A subclass inherits both unless it declares its own; docs/errors.md lists
 * every class with its code and its rule.
 * @category Errors
 */
export class RocketwireError extends Error {
  /** Stable machine-readable code of the class, `ERR_` + upper-case words; never changes with the message. */
  readonly errorCode: string = 'ERR_ROCKETWIRE';
  /**
   * True when the same call may succeed if made again: a timeout, a lost connection, a busy
   * broker, a route not known yet, no name server answering. False for what only a change of
   * code, options or data fixes (a bad option, an invalid message, a protocol violation).
   */
  readonly retriable: boolean = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Whether `err` says retrying may help: a RocketwireError with `retriable` true. For errors that
 * wrap another (a failed send, a consumer's broker request), whose `retriable` is their cause's.
 */
export function isRetriableError(err: unknown): boolean {
  return err instanceof RocketwireError && err.retriable;
}

/**
 * An option outside its range or of the wrong type; `option` names it. The message is the
 * subclass's own ("option X: …", "RemotingClient option X must be …").
 * @category Errors
 */
export class OptionError extends RocketwireError {
  override readonly name: string = 'OptionError';
  override readonly errorCode: string = 'ERR_OPTION';
  readonly option: string;
  constructor(option: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.option = option;
  }
}

/*
 * Errors raised by the pure codec. Every malformed input ends in a ProtocolError (or a subclass),
 * never in a RangeError or TypeError escaping from a Buffer read.
 */

/**
 * Bytes that do not follow the remoting protocol. `offset` is the byte position where the damage was found.
 * @category Errors
 */
export class ProtocolError extends RocketwireError {
  override readonly name: string = 'ProtocolError';
  override readonly errorCode: string = 'ERR_PROTOCOL';
  readonly offset: number;
  constructor(message: string, offset: number, options?: { cause?: unknown }) {
    super(message, options);
    this.offset = offset;
  }
}

/** A header field that is missing or not in the format Java would parse. */
export class HeaderFieldError extends ProtocolError {
  override readonly name = 'HeaderFieldError';
  override readonly errorCode = 'ERR_HEADER_FIELD';
  readonly field: string;
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(`header field "${field}": ${message}`, 0, options);
    this.field = field;
  }
}

/**
 * A compressed message body that would inflate past the limit it was decompressed with (the
 * consumers' `maxInflatedBodyBytes`, by default 64 MiB, or what is left of a pull's inflate
 * budget). The decompressor stopped at `limit` bytes: nothing more was allocated. `codec` names
 * the compression, `offset` the body's position.
 * @category Errors
 */
export class InflatedBodyTooLargeError extends ProtocolError {
  override readonly name = 'InflatedBodyTooLargeError';
  override readonly errorCode = 'ERR_INFLATED_BODY_TOO_LARGE';
  readonly codec: string;
  /** The limit, in bytes, the body would have exceeded. */
  readonly limit: number;
  /** What would exceed it ("the inflated body", "a frame's content size (… bytes)"). */
  readonly what: string;
  constructor(codec: string, limit: number, offset: number, what = 'the inflated body', options?: { cause?: unknown }) {
    super(`${codec} body: ${what} exceeds the limit of ${limit} bytes of a decompressed body`, offset, options);
    this.codec = codec;
    this.limit = limit;
    this.what = what;
  }
}

/** A message body compressed with a codec this build cannot inflate. */
export class UnsupportedCompressionError extends ProtocolError {
  override readonly name = 'UnsupportedCompressionError';
  override readonly errorCode = 'ERR_UNSUPPORTED_COMPRESSION';
  readonly codec: string;
  constructor(codec: string, offset: number, message?: string) {
    super(message ?? `message body compressed with ${codec}, which rocketwire cannot decompress`, offset);
    this.codec = codec;
  }
}

/**
 * A subscription expression Java's FilterAPI refuses (an empty SQL92 expression, a tag list of only "||").
 * @category Errors
 */
export class FilterExpressionError extends RocketwireError {
  override readonly name = 'FilterExpressionError';
  override readonly errorCode = 'ERR_FILTER_EXPRESSION';
}

/**
 * A properties string with more entries than decodeProperties' `maxEntries`: refused after
 * counting `limit` + 1 of them (no more work than that). `field` is `properties`.
 * @category Errors
 */
export class PropertiesLimitError extends ProtocolError {
  override readonly name = 'PropertiesLimitError';
  override readonly errorCode = 'ERR_PROPERTIES_LIMIT';
  readonly field = 'properties';
  readonly option = 'maxEntries';
  readonly limit: number;
  constructor(limit: number, length: number) {
    super(`properties string of ${length} characters has more than maxEntries (${limit}) entries; refused`, 0);
    this.limit = limit;
  }
}
