import net from 'node:net';
import { createRequire } from 'node:module';
import type tls from 'node:tls';
import createDebug from '../debug.js';
import { OptionError } from '../../protocol/errors.js';
import { optionValidator } from '../validate.js';
import { systemClock, type Clock } from '../clock.js';
import { parseAddress } from './address.js';
import { RemotingConnectError } from './errors.js';
import { ReadSlab, slabReadOptions } from './read-slab.js';

// node:tls (with the crypto it loads, about 4 MB) is required when a connection uses TLS, not when
// rocketwire is imported (import cost).
const loadTls = (): typeof tls => createRequire(import.meta.url)('node:tls') as typeof tls;

const log = createDebug('rocketwire:remoting');

/** Errors are OptionErrors whose message starts with the option's name, as the connection's. */
const check = optionValidator((option, message) => new OptionError(option, `${option} ${message}`));

/** What opening a socket needs (RemotingConnection's ConnectOptions carry these). */
export interface SocketOptions {
  /** Fails the connect after this long. @default 3000 */
  connectTimeoutMs?: number;
  /** TLS client options; when given the connection uses TLS. Server-style TlsOptions are accepted too. */
  tls?: tls.ConnectionOptions | tls.TlsOptions;
  /** TCP keep-alive's initial delay once connected. @default 30000 */
  keepAliveDelayMs?: number;
  /** Aborts the connect. */
  signal?: AbortSignal;
  clock?: Clock;
}

/**
 * Opens a TCP (or TLS) socket to "host:port" (or "[v6]:port") and resolves once it is ready, with
 * the read slab a plain TCP socket reads through. Rejects with RemotingConnectError naming the
 * address: unparsable, refused, timed out, closed before ready, or aborted.
 */
export function openSocket(
  addr: string,
  options: SocketOptions,
): Promise<{ socket: net.Socket; slab: ReadSlab | undefined }> {
  const connectTimeoutMs = check.numberAtLeast('connectTimeoutMs', options.connectTimeoutMs ?? 3000, 1);
  let host: string;
  let port: number;
  try {
    ({ host, port } = parseAddress(addr));
  } catch (err) {
    return Promise.reject(new RemotingConnectError(addr, (err as Error).message, { cause: err }));
  }
  return new Promise((resolve, reject) => {
    let slab: ReadSlab | undefined;
    const socket: net.Socket = options.tls
      ? loadTls().connect({
          ...(options.tls as tls.ConnectionOptions),
          host,
          port,
          servername: (options.tls as tls.ConnectionOptions).servername ?? (net.isIP(host) ? undefined : host),
        })
      : net.connect({ host, port, ...slabReadOptions((slab = new ReadSlab())) });
    const readyEvent = options.tls ? 'secureConnect' : 'connect';
    const clock = options.clock ?? systemClock;
    const timer = clock.setTimeout(() => {
      fail(new RemotingConnectError(addr, `no connection within ${connectTimeoutMs} ms`));
    }, connectTimeoutMs);
    const onError = (err: Error): void => fail(new RemotingConnectError(addr, err.message, { cause: err }));
    const onClose = (): void => fail(new RemotingConnectError(addr, 'socket closed before the connection was ready'));
    const signal = options.signal;
    const onAbort = (): void => fail(new RemotingConnectError(addr, 'connect aborted', { cause: signal?.reason }));
    if (signal?.aborted) {
      queueMicrotask(onAbort);
    } else {
      signal?.addEventListener('abort', onAbort, { once: true });
    }
    function cleanup(): void {
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.off('error', onError);
      socket.off('close', onClose);
      socket.off(readyEvent, onReady);
    }
    function fail(err: RemotingConnectError): void {
      cleanup();
      socket.destroy();
      log('connect to %s failed: %s', addr, err.message);
      reject(err);
    }
    function onReady(): void {
      cleanup();
      socket.setKeepAlive(true, options.keepAliveDelayMs ?? 30_000);
      log('connected to %s', addr);
      resolve({ socket, slab });
    }
    socket.once('error', onError);
    socket.once('close', onClose);
    socket.once(readyEvent, onReady);
  });
}
