export {
  RemotingConnection,
  type RequestProcessor,
  type InvokeOptions,
  type RemotingConnectionOptions,
  type ConnectOptions,
  type ConnectionStats,
} from './connection.js';
export { RemotingServer, type RemotingServerOptions } from './server.js';
export { RemotingClient, defaultRemotingClientOptions, type RemotingClientOptions } from './client.js';
export * from './errors.js';
export * from './acl.js';
export { parseAddress, formatAddress } from './address.js';
