/**
 * ACL 1.0 permission bits and their spelling in plain_acl.yml, as Apache's
 * org.apache.rocketmq.acl.common.Permission (4.9.x) has them: DENY 1, ANY 2, PUB 4, SUB 8.
 */
export const Permission = {
  DENY: 1,
  ANY: 2,
  PUB: 4,
  SUB: 8,
} as const;

/** What an account is given on a resource, or what a request needs (one of the bits above, or PUB|SUB). */
export type PermissionBits = number;

/** The spellings a file may use; any other word is refused when the file is loaded (Apache: DENY, silently). */
const SPELLINGS: Record<string, PermissionBits> = {
  DENY: Permission.DENY,
  PUB: Permission.PUB,
  SUB: Permission.SUB,
  'PUB|SUB': Permission.PUB | Permission.SUB,
  'SUB|PUB': Permission.PUB | Permission.SUB,
};

/** Parse "PUB", "SUB", "PUB|SUB", "SUB|PUB" or "DENY"; undefined for anything else. */
export function parsePermission(text: string): PermissionBits | undefined {
  return SPELLINGS[text.trim()];
}

/** The file spelling of granted bits ("PUB|SUB"). */
export function permissionText(bits: PermissionBits): string {
  if ((bits & Permission.DENY) !== 0) return 'DENY';
  const parts: string[] = [];
  if ((bits & Permission.PUB) !== 0) parts.push('PUB');
  if ((bits & Permission.SUB) !== 0) parts.push('SUB');
  return parts.length > 0 ? parts.join('|') : 'DENY';
}

/** Permission.checkPermission: DENY wins; ANY is met by PUB or SUB; otherwise the needed bit must be owned. */
export function permits(needed: PermissionBits, owned: PermissionBits): boolean {
  if ((owned & Permission.DENY) !== 0) return false;
  if ((needed & Permission.ANY) !== 0) return (owned & (Permission.PUB | Permission.SUB)) !== 0;
  return (needed & owned) !== 0;
}
