import createDebug from '../debug.js';
import type { Operation, OperationRequest, RemotingCommand } from '../../protocol/internal.js';
import type { RemotingClient } from '../remoting/index.js';
import type { ResolvedClientOptions } from './client-options.js';
import { NameServerUnavailableError } from './errors.js';
import { TypedEmitter } from '../emitter.js';
import type { LoggerSet } from '../logger.js';
import { operationRequest, type RequestStamp } from './operation-call.js';

const log = createDebug('rocketwire:client');

/**
 * A name server stopped answering (`error` set) or answers again after failing (`error` undefined):
 * the clients' `'nameServerError'` and `'nameServerReachable'` events.
 * @category Shared by every client
 */
export interface NameServerStatus {
  /** The name server's address ("host:port"). */
  addr: string;
  /** Why it did not answer; absent when it answered. */
  error?: Error;
}

/** What the name-server path needs of its client instance. */
export interface NameServerHost {
  readonly remoting: RemotingClient;
  readonly stamp: RequestStamp;
  readonly options: Pick<ResolvedClientOptions, 'namesrvAddrs' | 'mqClientApiTimeoutMs' | 'clock'>;
  readonly logger: Pick<LoggerSet, 'info' | 'warn'>;
  shuttingDown(): boolean;
}

/**
 * The client instance's requests to the name servers: failover from the last one that answered,
 * and the episodes of a name server failing and answering again (logged once each, and told to
 * the clients' listeners).
 */
export class NameServerClient {
  private index = 0;
  /** Name servers whose last request failed: an episode is logged when it starts and when it ends. */
  private readonly failing = new Set<string>();
  /** Name-server failures and recoveries (onStatus). */
  private readonly events = new TypedEmitter<{ nameServerStatus: [status: NameServerStatus] }>();
  /** The last name-server answer: address and clock time (health()). */
  lastAnswer: { addr: string; atMs: number } | null = null;
  /** The name servers asked: the namesrvAddr option's, or the address server's latest list. */
  private addrs: readonly string[];

  constructor(private readonly host: NameServerHost) {
    this.addrs = host.options.namesrvAddrs;
  }

  /** The name servers asked now. */
  get addresses(): readonly string[] {
    return this.addrs;
  }

  /** A new list (from the address server); the next request starts with its first entry. */
  setAddresses(addrs: readonly string[]): void {
    this.addrs = [...addrs];
    this.index = 0;
  }

  /** Tells the listeners of a failure or recovery seen elsewhere (the address server). */
  report(status: NameServerStatus): void {
    this.events.emit('nameServerStatus', status);
  }

  /**
   * Sends `op` to the name servers, encoded by its row, starting with the last one that answered
   * and moving on to the next on a transport failure (refused, timeout, closed). A broker-style
   * answer (any response) ends it; the caller reads it (readCallReply), with the address that answered.
   */
  async request<O extends Operation>(
    op: O,
    header: OperationRequest<O>,
    timeoutMs = this.host.options.mqClientApiTimeoutMs,
    quiet = false,
  ): Promise<{ res: RemotingCommand; addr: string }> {
    const request = operationRequest(op, header, undefined, this.host.stamp);
    const addrs = this.addrs;
    const failures: { addr: string; error: Error }[] = [];
    for (let i = 0; i < addrs.length; i++) {
      const idx = (this.index + i) % addrs.length;
      const addr = addrs[idx]!;
      try {
        const res = await this.host.remoting.invoke(addr, request, { timeoutMs });
        this.index = idx;
        this.answered(addr);
        return { res, addr };
      } catch (err) {
        log('name server %s failed: %s', addr, (err as Error).message);
        failures.push({ addr, error: err as Error });
        if (!quiet) this.failed(addr, err as Error);
      }
    }
    if (addrs.length > 0) this.index = (this.index + 1) % addrs.length;
    throw new NameServerUnavailableError(failures);
  }

  private answered(addr: string): void {
    this.lastAnswer = { addr, atMs: this.host.options.clock.now() };
    if (!this.failing.delete(addr)) return;
    this.host.logger.info(`name server ${addr} answers again`);
    this.events.emit('nameServerStatus', { addr });
  }

  private failed(addr: string, error: Error): void {
    if (this.host.shuttingDown()) return;
    if (!this.failing.has(addr)) {
      this.failing.add(addr);
      this.host.logger.warn(`name server ${addr} is not answering: ${error.message.split('\n')[0]}`);
    }
    this.events.emit('nameServerStatus', { addr, error });
  }

  /** Registers a listener for name-server failures and recoveries; returns the function that removes it. */
  onStatus(listener: (status: NameServerStatus) => void): () => void {
    return this.events.on('nameServerStatus', listener);
  }
}
