/**
 * What the `logger` option of every client and of the embedded broker takes: any object with
 * `debug`, `info`, `warn` and `error` methods taking a message string. `console` fits, and so do pino
 * and winston loggers. Every line is one complete sentence that names what failed (an address, a
 * group, a topic) and why; no payloads are ever logged.
 * @category Shared by every client
 */
export interface Logger {
  /** Detail lines (the default logger drops them; the `DEBUG=rocketwire:*` namespaces trace more). */
  debug(message: string): void;
  /** Recoveries: a name server or broker that answers again (the default logger drops them). */
  info(message: string): void;
  /**
   * What the application should know about, once per episode: a peer that stops answering, a
   * handler result that is not a status, a failed send-back or offset commit, … (stderr by default).
   */
  warn(message: string): void;
  /** Errors (stderr by default). */
  error(message: string): void;
}

/**
 * The `logger` option: a Logger, or `false` to log nothing.
 * @default warn and error lines to stderr through `console`, prefixed "rocketwire:"
 * @category Shared by every client
 */
export type LoggerOption = Logger | false;

const noop = (): void => {};

/** Logs nothing. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/** The default: warn and error lines to stderr (console.warn / console.error); debug and info dropped. */
export const defaultLogger: Logger = {
  debug: noop,
  info: noop,
  warn: (message) => console.warn(`rocketwire: ${message}`),
  error: (message) => console.error(`rocketwire: ${message}`),
};

/** Checks and resolves the `logger` option (undefined → defaultLogger, false → silentLogger). */
export function resolveLogger(option: LoggerOption | undefined, check: (message: string) => Error): Logger {
  if (option === undefined) return defaultLogger;
  if (option === false) return silentLogger;
  if (option === null || (typeof option !== 'object' && typeof option !== 'function')) {
    throw check('must be an object with debug, info, warn and error methods, or false');
  }
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    if (typeof (option as unknown as Record<string, unknown>)[level] !== 'function')
      throw check(`has no ${level}() method`);
  }
  // Called as methods of their object, so a pino or winston logger keeps its `this`; one wrapper per
  // object, so that LoggerSet counts a logger given to two clients once.
  let wrapped = wrappers.get(option);
  if (!wrapped) {
    wrapped = {
      debug: (m) => option.debug(m),
      info: (m) => option.info(m),
      warn: (m) => option.warn(m),
      error: (m) => option.error(m),
    };
    wrappers.set(option, wrapped);
  }
  return wrapped;
}

const wrappers = new WeakMap<Logger, Logger>();

/**
 * Fans one line out to every distinct logger registered: the client instance shared by several
 * clients logs its name-server episodes to each of their loggers, once per logger.
 */
export class LoggerSet implements Logger {
  private readonly loggers = new Map<Logger, number>();
  add(logger: Logger): void {
    this.loggers.set(logger, (this.loggers.get(logger) ?? 0) + 1);
  }
  remove(logger: Logger): void {
    const n = this.loggers.get(logger);
    if (n === undefined) return;
    if (n <= 1) this.loggers.delete(logger);
    else this.loggers.set(logger, n - 1);
  }
  debug(m: string): void {
    for (const l of this.loggers.keys()) l.debug(m);
  }
  info(m: string): void {
    for (const l of this.loggers.keys()) l.info(m);
  }
  warn(m: string): void {
    for (const l of this.loggers.keys()) l.warn(m);
  }
  error(m: string): void {
    for (const l of this.loggers.keys()) l.error(m);
  }
}
