import * as fs from 'node:fs';
import { parsePermission, Permission, type PermissionBits } from './permission.js';
import { parseAddressPattern, type AddressPattern } from './remote-address.js';
import { parseYamlSubset, type YamlValue } from './yaml-subset.js';
import { AclConfigError, AddressPatternError, YamlSubsetError } from './errors.js';

/**
 * One account of Apache's ACL 1.0 plain_acl.yml (PlainAccessConfig).
 * @category Testing with the embedded broker
 */
export interface AclAccount {
  /** Sent by the client as extField AccessKey; more than 6 characters (Apache's rule). */
  accessKey: string;
  /** The HmacSHA1 key of the client's signature; more than 6 characters. */
  secretKey: string;
  /**
   * Requests of this account from a matching address are served without checking their signature or
   * permissions (Apache's semantics; see remote-address.ts for the forms).
   * @default none
   */
  whiteRemoteAddress?: string | null;
  /**
   * Admin accounts may send the admin codes (topic and group creation and deletion, offset resets,
   * …) and, when they have no topicPerms / groupPerms, use every topic and group.
   * @default false
   */
  admin?: boolean;
  /**
   * Permission on topics not named in topicPerms: "PUB", "SUB", "PUB|SUB" or "DENY".
   * @default "DENY"
   */
  defaultTopicPerm?: string | null;
  /**
   * Permission on groups not named in groupPerms.
   * @default "DENY"
   */
  defaultGroupPerm?: string | null;
  /** `TOPIC=PERM` entries, e.g. "orders=PUB|SUB". */
  topicPerms?: string[] | null;
  /** `GROUP=PERM` entries, e.g. "billing=SUB". */
  groupPerms?: string[] | null;
}

/**
 * Apache's ACL 1.0 plain-access configuration (plain_acl.yml), as a file's content or in code.
 * @category Testing with the embedded broker
 */
export interface AclConfig {
  /** Addresses whose requests are served whatever they carry (no key, no signature, no permission check). */
  globalWhiteRemoteAddresses?: string[] | null;
  /** The accounts: access key, secret key, admin flag, white address and grants. */
  accounts?: AclAccount[] | null;
}

/** Apache's AclConstants.ACCESS_KEY_MIN_LENGTH / SECRET_KEY_MIN_LENGTH: keys must be longer than 6. */
export const ACL_KEY_MIN_LENGTH = 6;

/** An account ready for checks: grants parsed, white address compiled. */
export interface PlainAccount {
  accessKey: string;
  secretKey: string;
  admin: boolean;
  white: AddressPattern;
  defaultTopicPerm: PermissionBits;
  defaultGroupPerm: PermissionBits;
  /** null when the account names no topic (Apache: an admin without grants may use everything). */
  topicPerms: Map<string, PermissionBits> | null;
  groupPerms: Map<string, PermissionBits> | null;
}

export interface PlainAclData {
  globalWhite: AddressPattern[];
  accounts: Map<string, PlainAccount>;
  /** Where it came from, for messages. */
  source: string | undefined;
}

const ACCOUNT_KEYS = new Set([
  'accessKey',
  'secretKey',
  'whiteRemoteAddress',
  'admin',
  'defaultTopicPerm',
  'defaultGroupPerm',
  'topicPerms',
  'groupPerms',
]);
// dataVersion is written by Apache's own updates of the file; it carries nothing a check needs
const TOP_KEYS = new Set(['globalWhiteRemoteAddresses', 'accounts', 'dataVersion']);

/** Read a plain_acl.yml (the YAML subset of yaml-subset.ts) or a JSON file of the same shape. */
export function readAclFile(file: string): AclConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new AclConfigError(`cannot be read (${(err as Error).message})`, { file, cause: err });
  }
  let value: unknown;
  if (/^\s*\{/.test(text)) {
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new AclConfigError(`is not valid JSON (${(err as Error).message})`, { file, cause: err });
    }
  } else {
    try {
      value = parseYamlSubset(text) satisfies YamlValue;
    } catch (err) {
      if (err instanceof YamlSubsetError)
        throw new AclConfigError(
          `${err.message} (the broker reads the YAML subset plain_acl.yml files use: see docs/embedded-broker.md)`,
          { file, cause: err },
        );
      throw err;
    }
  }
  if (value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new AclConfigError('must be a mapping with globalWhiteRemoteAddresses and accounts', { file });
  return value as AclConfig;
}

function str(v: unknown, field: string, file: string | undefined, allowNull = false): string | null {
  if (v === undefined || v === null) {
    if (allowNull) return null;
    throw new AclConfigError('is missing', { file, field });
  }
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string') throw new AclConfigError(`must be a string, got ${JSON.stringify(v)}`, { file, field });
  return v;
}

function list(v: unknown, field: string, file: string | undefined): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new AclConfigError('must be a list', { file, field });
  return v;
}

function perm(v: unknown, field: string, file: string | undefined): PermissionBits {
  const s = str(v, field, file, true);
  // Apache: a missing default permission is DENY
  if (s === null || s.trim() === '') return Permission.DENY;
  const bits = parsePermission(s);
  if (bits === undefined)
    throw new AclConfigError(`${JSON.stringify(s)} is not a permission: PUB, SUB, PUB|SUB, SUB|PUB or DENY`, {
      file,
      field,
    });
  return bits;
}

function grants(v: unknown, field: string, file: string | undefined): Map<string, PermissionBits> | null {
  const items = list(v, field, file);
  if (items.length === 0) return null;
  const m = new Map<string, PermissionBits>();
  items.forEach((item, i) => {
    const f = `${field}[${i}]`;
    const s = str(item, f, file)!;
    const parts = s.split('=');
    if (parts.length !== 2 || parts[0]!.trim() === '')
      throw new AclConfigError(`${JSON.stringify(s)} is not NAME=PERM (e.g. orders=PUB|SUB)`, { file, field: f });
    m.set(parts[0]!.trim(), perm(parts[1], f, file));
  });
  return m;
}

function address(v: string | null, field: string, file: string | undefined): AddressPattern {
  try {
    return parseAddressPattern(v);
  } catch (err) {
    if (err instanceof AddressPatternError) throw new AclConfigError(err.message, { file, field, cause: err });
    throw err;
  }
}

/**
 * Check a configuration and compile it for the checker. Stricter than Apache where Apache would
 * silently weaken or drop an entry: an unknown key, an unknown permission word (Apache: DENY), an
 * access key given twice (Apache keeps the first and logs a warning) are refused.
 */
export function compileAclConfig(config: AclConfig, file?: string): PlainAclData {
  if (config === null || typeof config !== 'object' || Array.isArray(config))
    throw new AclConfigError('must be an object with globalWhiteRemoteAddresses and accounts', { file });
  for (const k of Object.keys(config))
    if (!TOP_KEYS.has(k))
      throw new AclConfigError(`unknown key (known: ${[...TOP_KEYS].join(', ')})`, { file, field: k });
  const globalWhite = list(config.globalWhiteRemoteAddresses, 'globalWhiteRemoteAddresses', file).map((v, i) => {
    const f = `globalWhiteRemoteAddresses[${i}]`;
    return address(str(v, f, file), f, file);
  });
  const accounts = new Map<string, PlainAccount>();
  list(config.accounts, 'accounts', file).forEach((a, i) => {
    const f = `accounts[${i}]`;
    if (a === null || typeof a !== 'object' || Array.isArray(a))
      throw new AclConfigError('must be a mapping (accessKey, secretKey, …)', { file, field: f });
    const o = a as Record<string, unknown>;
    for (const k of Object.keys(o))
      if (!ACCOUNT_KEYS.has(k))
        throw new AclConfigError(`unknown key (known: ${[...ACCOUNT_KEYS].join(', ')})`, { file, field: `${f}.${k}` });
    const accessKey = str(o.accessKey, `${f}.accessKey`, file)!;
    const secretKey = str(o.secretKey, `${f}.secretKey`, file)!;
    if (accessKey.length <= ACL_KEY_MIN_LENGTH)
      throw new AclConfigError(`must be longer than ${ACL_KEY_MIN_LENGTH} characters (Apache's rule)`, {
        file,
        field: `${f}.accessKey`,
      });
    if (secretKey.length <= ACL_KEY_MIN_LENGTH)
      throw new AclConfigError(`must be longer than ${ACL_KEY_MIN_LENGTH} characters (Apache's rule)`, {
        file,
        field: `${f}.secretKey`,
      });
    if (accounts.has(accessKey))
      throw new AclConfigError(`access key ${accessKey} is given twice`, { file, field: `${f}.accessKey` });
    const admin = o.admin ?? false;
    if (typeof admin !== 'boolean' && admin !== 'true' && admin !== 'false')
      throw new AclConfigError(`must be true or false, got ${JSON.stringify(admin)}`, { file, field: `${f}.admin` });
    accounts.set(accessKey, {
      accessKey,
      secretKey,
      admin: admin === true || admin === 'true',
      white: address(str(o.whiteRemoteAddress, `${f}.whiteRemoteAddress`, file, true), `${f}.whiteRemoteAddress`, file),
      defaultTopicPerm: perm(o.defaultTopicPerm, `${f}.defaultTopicPerm`, file),
      defaultGroupPerm: perm(o.defaultGroupPerm, `${f}.defaultGroupPerm`, file),
      topicPerms: grants(o.topicPerms, `${f}.topicPerms`, file),
      groupPerms: grants(o.groupPerms, `${f}.groupPerms`, file),
    });
  });
  return { globalWhite, accounts, source: file };
}

/** The `acl` option: a file name (plain_acl.yml or JSON) or the configuration itself. */
export function loadAclOption(acl: string | AclConfig): PlainAclData {
  if (typeof acl === 'string') return compileAclConfig(readAclFile(acl), acl);
  return compileAclConfig(acl);
}
