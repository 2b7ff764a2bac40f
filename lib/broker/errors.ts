import { OptionError, RocketwireError } from '../../protocol/internal.js';

/**
 * The store could not write (disk full, folder not writable, closed). `code` is the errno code when there is one.
 * @category Errors
 */
export class StoreWriteError extends RocketwireError {
  override readonly name = 'StoreWriteError';
  override readonly errorCode = 'ERR_STORE_WRITE';
  readonly code: string | undefined;
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options);
    this.code = options?.code;
  }
}

/**
 * A broker or store option outside its allowed range; `option` names it.
 * @category Errors
 */
export class BrokerOptionError extends OptionError {
  override readonly name = 'BrokerOptionError';
  override readonly errorCode = 'ERR_BROKER_OPTION';
  constructor(option: string, message: string) {
    super(option, `${option} ${message}`);
  }
}

/** A path the store needs as a folder exists as something else. */
export class NotAFolderError extends RocketwireError {
  override readonly name = 'NotAFolderError';
  override readonly errorCode = 'ERR_NOT_A_FOLDER';
  readonly path: string;
  constructor(path: string) {
    super(`${path} exists and is not a folder`);
    this.path = path;
  }
}

/** Why the broker closed a consumer's connection: no heartbeat refreshed it within channelExpiredTimeoutMs. */
export class ChannelExpiredError extends RocketwireError {
  override readonly name = 'ChannelExpiredError';
  override readonly errorCode = 'ERR_CHANNEL_EXPIRED';
  override readonly retriable: boolean = true;
  readonly group: string;
  readonly clientId: string;
  constructor(group: string, clientId: string, expiredAfterMs: number) {
    super(`consumer channel of ${clientId} in group ${group} expired: no heartbeat for ${expiredAfterMs} ms`);
    this.group = group;
    this.clientId = clientId;
  }
}

/**
 * A file the broker loads at start (consumerOffset.json, topics.json, delayOffset.json) and its
 * `.bak` could not be read. The broker refuses to start rather than start empty and overwrite the
 * file at its next flush (which would turn one unreadable file into a permanent loss).
 */
export class ConfigFileError extends RocketwireError {
  override readonly name = 'ConfigFileError';
  override readonly errorCode = 'ERR_CONFIG_FILE';
  readonly file: string;
  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super(
      `${file} cannot be read (${reason}) and neither can ${file}.bak: refusing to start so that the file is not overwritten; ` +
        `repair it, or move it away to start without what it held`,
      options,
    );
    this.file = file;
  }
}

/** A path the store would build from a topic, group or queue id leaves the store root. */
export class StorePathError extends RocketwireError {
  override readonly name = 'StorePathError';
  override readonly errorCode = 'ERR_STORE_PATH';
  readonly root: string;
  /** The name that was refused. */
  readonly part: string;
  constructor(root: string, part: string) {
    super(`refusing to open a store path for ${JSON.stringify(part)}: it would leave the store root ${root}`);
    this.root = root;
    this.part = part;
  }
}

/**
 * A file the broker wrote (topics.json, a checkpoint, the request-mode table) holds something it
 * never writes; the message says what. Its loader catches it and falls back (a `.bak`, a rebuild
 * from the commit log), so it names the content, not the file.
 */
export class StoreFileFormatError extends RocketwireError {
  override readonly name = 'StoreFileFormatError';
  override readonly errorCode = 'ERR_STORE_FILE_FORMAT';
}
