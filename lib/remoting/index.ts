export {
  RemotingConnection,
  type RequestProcessor,
  type RemotingConnectionOptions,
  type ConnectOptions,
} from './connection.js';
export type { InvokeOptions, ConnectionStats } from './connection-options.js';
export { RemotingServer, type RemotingServerOptions } from './server.js';
export { RemotingClient, defaultRemotingClientOptions, type RemotingClientOptions } from './client.js';
export * from './errors.js';
export * from './acl.js';
export { parseAddress, formatAddress } from './address.js';
