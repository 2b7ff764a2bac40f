import { createRequire } from 'node:module';
import type { RemotingCommand } from '../../protocol/index.js';

// node:crypto is required when a request is signed, not when rocketwire is imported (import cost).
let cryptoModule: typeof import('node:crypto') | undefined;
const crypto = (): typeof import('node:crypto') =>
  (cryptoModule ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto'));

/**
 * ACL 1.0 request signing as Apache RocketMQ's AclClientRPCHook does it (4.9.x and 5.x acl module):
 *   1. put "AccessKey" (and "SecurityToken" when there is one) into extFields;
 *   2. take every extFields entry except "Signature", sorted by key (Java TreeMap = UTF-16 code
 *      unit order, which is also JavaScript's default string sort), and concatenate the VALUES only;
 *   3. append the body bytes; HmacSHA1 with the secret key (UTF-8), Base64 with padding;
 *   4. put the result as "Signature".
 * The broker (PlainAccessValidator) recomputes the same over the extFields it receives.
 * @category Remoting
 */
export interface AclCredentials {
  /** The access key, sent with every request (extField AccessKey). */
  accessKey: string;
  /** The secret key the signature is computed with; never sent. */
  secretKey: string;
  /** A security token (STS), sent as extField SecurityToken when given. */
  securityToken?: string;
}

export const ACL_ACCESS_KEY = 'AccessKey';
export const ACL_SECRET_KEY = 'SecretKey';
export const ACL_SIGNATURE = 'Signature';
export const ACL_SECURITY_TOKEN = 'SecurityToken';

/** The bytes that are signed: sorted extFields values (Signature excluded) followed by the body. */
export function aclSignedContent(extFields: Readonly<Record<string, string>>, body: Buffer | null): Buffer {
  const keys = Object.keys(extFields).sort();
  let s = '';
  for (const k of keys) {
    if (k === ACL_SIGNATURE) continue;
    const v = extFields[k];
    if (v == null) continue;
    s += v;
  }
  const text = Buffer.from(s, 'utf8');
  return body && body.length > 0 ? Buffer.concat([text, body]) : text;
}

/** HmacSHA1(secretKey, content), Base64 (AclSigner.calSignature). */
export function aclSignature(content: Buffer, secretKey: string): string {
  return crypto().createHmac('sha1', Buffer.from(secretKey, 'utf8')).update(content).digest('base64');
}

/**
 * Sign a request in place: adds AccessKey, SecurityToken (when given) and Signature to its
 * extFields (a fresh object, so a caller's shared header object is not modified). Returns the signature.
 */
export function signRequest(request: RemotingCommand, credentials: AclCredentials): string {
  const ext: Record<string, string> = { ...(request.extFields ?? {}) };
  delete ext[ACL_SIGNATURE];
  ext[ACL_ACCESS_KEY] = credentials.accessKey;
  if (credentials.securityToken != null) ext[ACL_SECURITY_TOKEN] = credentials.securityToken;
  const signature = aclSignature(aclSignedContent(ext, request.body), credentials.secretKey);
  ext[ACL_SIGNATURE] = signature;
  request.extFields = ext;
  return signature;
}

export type AclVerifyResult =
  | { ok: true; accessKey: string }
  | { ok: false; accessKey: string | undefined; reason: string };

/**
 * Server side: check the signature of a received request. `secretKeyOf` returns the secret for an
 * access key (undefined when the key is unknown).
 */
export function verifyRequestSignature(
  request: Pick<RemotingCommand, 'extFields' | 'body'>,
  secretKeyOf: (accessKey: string) => string | undefined,
): AclVerifyResult {
  const ext = request.extFields;
  const accessKey = ext?.[ACL_ACCESS_KEY];
  if (!ext || accessKey == null) return { ok: false, accessKey: undefined, reason: 'no AccessKey in the request' };
  const given = ext[ACL_SIGNATURE];
  if (given == null) return { ok: false, accessKey, reason: 'no Signature in the request' };
  const secret = secretKeyOf(accessKey);
  if (secret === undefined) return { ok: false, accessKey, reason: `unknown AccessKey ${accessKey}` };
  const expected = Buffer.from(aclSignature(aclSignedContent(ext, request.body), secret));
  const got = Buffer.from(given);
  if (expected.length !== got.length || !crypto().timingSafeEqual(expected, got)) {
    return { ok: false, accessKey, reason: `signature mismatch for AccessKey ${accessKey}` };
  }
  return { ok: true, accessKey };
}
