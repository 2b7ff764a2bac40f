import type { StoreWarn } from '../atomic-file.js';
import { BrokerOptionError } from '../errors.js';
import { AuthChecker } from './auth-checker.js';
import { AuthStore } from './auth-store.js';
import type { CheckScope } from './permission-checker.js';

/**
 * 5.x auth (ACL 2.0) of the embedded broker: startBroker's `auth` option, named after Apache
 * 5.3's AuthConfig keys in broker.conf. Users and ACLs are managed with the AUTH_* requests
 * (AdminClient createUser … listAcl, `rocketwire admin auth`, mqadmin createUser …), which every
 * embedded broker serves whether or not checks are on, and kept in <store>/config/auth.json.
 * @category Testing with the embedded broker
 */
export interface BrokerAuthOptions {
  /**
   * Every request must be signed (AccessKey + Signature, HmacSHA1: rocketwire's `acl` client
   * option, Java's AclClientRPCHook) by a stored user that is enabled.
   * @default false (Java's default)
   */
  authenticationEnabled?: boolean;
  /**
   * Every request's topics and groups (and, for admin requests, the cluster) must be allowed by
   * the signing user's ACL; a Super user passes everything.
   * @default false (Java's default)
   */
  authorizationEnabled?: boolean;
  /**
   * initAuthenticationUser: a Super user created at start when no user of that name is stored
   * (a stored one, its password included, is left as it is).
   * @default undefined (no user is made: the first one comes from a broker started without checks)
   */
  initAuthenticationUser?: { username: string; password: string };
  /**
   * authenticationWhitelist: request codes authentication skips.
   * @default [] (every code is checked)
   */
  authenticationWhitelist?: readonly number[];
  /**
   * authorizationWhitelist: request codes authorization skips.
   * @default [] (every code is checked)
   */
  authorizationWhitelist?: readonly number[];
}

/** A broker's auth: its store (loaded, the initial user made) and, when a check is on, its checker. */
export interface BrokerAuth {
  store: AuthStore;
  checker(scope: CheckScope): AuthChecker | undefined;
}

export function setUpBrokerAuth(
  storeDir: string,
  options: BrokerAuthOptions | undefined,
  clusterName: string,
  warn: StoreWarn,
): BrokerAuth {
  const store = new AuthStore(storeDir, warn);
  store.load();
  const init = options?.initAuthenticationUser;
  if (init !== undefined) {
    if (!init.username || !init.password)
      throw new BrokerOptionError('auth.initAuthenticationUser', 'needs a username and a password');
    store.ensureSuperUser(init.username, init.password);
  }
  const on = options?.authenticationEnabled === true || options?.authorizationEnabled === true;
  const settings = {
    authenticationEnabled: options?.authenticationEnabled === true,
    authorizationEnabled: options?.authorizationEnabled === true,
    authenticationWhitelist: new Set(options?.authenticationWhitelist ?? []),
    authorizationWhitelist: new Set(options?.authorizationWhitelist ?? []),
    clusterName,
  };
  return { store, checker: (scope) => (on ? new AuthChecker(store, settings, scope) : undefined) };
}
