import { RocketwireError } from '../../../protocol/errors.js';

/**
 * The ACL configuration (the `acl` option / `--acl FILE`) cannot be used: the file does not read,
 * is outside the YAML subset the broker reads, or an entry is wrong. `field` is the path of the
 * entry ("accounts[1].topicPerms[0]"), `file` the file when there is one. The broker does not start.
 * @category Errors
 */
export class AclConfigError extends RocketwireError {
  override readonly name = 'AclConfigError';
  override readonly errorCode = 'ERR_ACL_CONFIG';
  readonly file: string | undefined;
  readonly field: string | undefined;
  constructor(
    message: string,
    details: { file?: string | undefined; field?: string | undefined; cause?: unknown } = {},
  ) {
    super(
      `${details.file ? `ACL file ${details.file}: ` : 'acl option: '}${details.field ? `${details.field}: ` : ''}${message}`,
      { cause: details.cause },
    );
    this.file = details.file;
    this.field = details.field;
  }
}

/** A whitelist entry that is none of the forms above; `pattern` is the entry. */
export class AddressPatternError extends RocketwireError {
  override readonly name = 'AddressPatternError';
  override readonly errorCode = 'ERR_ACL_ADDRESS_PATTERN';
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super(`white address ${JSON.stringify(pattern)}: ${reason}`);
  }
}

/** A document outside the subset, or malformed; `line` is 1-based. */
export class YamlSubsetError extends RocketwireError {
  override readonly name = 'YamlSubsetError';
  override readonly errorCode = 'ERR_ACL_YAML';
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/** A request whose resources cannot be read (a heartbeat body that does not parse). */
export class RequestAccessParseError extends RocketwireError {
  override readonly name = 'RequestAccessParseError';
  override readonly errorCode = 'ERR_ACL_REQUEST_PARSE';
}

/**
 * A 5.x auth management request (AUTH_* 3001–3010) the broker refuses: a user that exists already
 * or does not, an ACL entry without actions, an invalid source IP… The message is Java's
 * (AuthenticationException / AuthorizationException); the broker answers it as NO_PERMISSION with
 * the message as remark, as Apache 5.3 does, so a client sees it as AdminPermissionError.
 */
export class AuthMetadataError extends RocketwireError {
  override readonly name = 'AuthMetadataError';
  override readonly errorCode = 'ERR_AUTH_METADATA';
}
