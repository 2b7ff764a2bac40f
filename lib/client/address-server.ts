import http from 'node:http';
import type { Clock } from '../clock.js';
import type { LoggerSet } from '../logger.js';
import { parseNamesrvAddr } from './client-options.js';
import { AddressServerError } from './errors.js';
import type { NameServerStatus } from './name-server-client.js';

/** How long one fetch may take: Java's TopAddressing.fetchNSAddr() asks with 3000 ms. */
export const ADDRESS_SERVER_TIMEOUT_MS = 3000;
/** Java's MQClientInstance fetches the list every 2 minutes, the first 10 s after start. */
export const ADDRESS_SERVER_POLL_MS = 120_000;
export const ADDRESS_SERVER_FIRST_POLL_MS = 10_000;
/** A name server list is a line of "host:port;host:port": anything longer is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * GET `url` on the address server, as Java's DefaultTopAddressing: a 200 answer's text, trimmed
 * and cut at its first line break (clearNewLine). Any other status, a socket error, a timeout on
 * `clock` or an empty answer is an AddressServerError.
 */
export function fetchNameServerList(url: string, clock: Clock, timeoutMs = ADDRESS_SERVER_TIMEOUT_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err: AddressServerError | null, text?: string): void => {
      if (done) return;
      done = true;
      clock.clearTimeout(timer);
      if (err) reject(err);
      else resolve(text!);
    };
    const req = http.get(url, { headers: { accept: 'text/plain' } }, (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) {
          req.destroy();
          finish(new AddressServerError(url, `answer longer than ${MAX_ANSWER_BYTES} bytes`, { status }));
        } else chunks.push(c);
      });
      res.on('error', (err) => finish(new AddressServerError(url, err.message, { status, cause: err })));
      res.on('end', () => {
        if (status !== 200) return finish(new AddressServerError(url, `answered HTTP ${status}`, { status }));
        const text = clearNewLine(Buffer.concat(chunks).toString('utf8'));
        if (text === '') return finish(new AddressServerError(url, 'answered an empty name server list', { status }));
        finish(null, text);
      });
    });
    req.on('error', (err) => finish(new AddressServerError(url, err.message, { cause: err })));
    const timer = clock.setTimeout(() => {
      req.destroy();
      finish(new AddressServerError(url, `no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
}

/** Java's clearNewLine: trimmed, and only what comes before the first "\r" or "\n". */
function clearNewLine(s: string): string {
  const t = s.trim();
  const cut = t.search(/[\r\n]/);
  return cut < 0 ? t : t.slice(0, cut);
}

/** What the address server's poller needs of its client instance. */
export interface AddressServerHost {
  readonly url: string;
  readonly clock: Clock;
  readonly logger: Pick<LoggerSet, 'info' | 'warn'>;
  /** The new name server list, when it differs from the last one. */
  apply(addrs: string[]): void;
  /** A failure (error set) or a recovery, told to the clients' 'nameServerError' / 'nameServerReachable' listeners. */
  status(status: NameServerStatus): void;
}

/**
 * The name server list from an address server (Java's MQClientAPIImpl.fetchNameServerAddr): fetched
 * at start and then every 2 minutes; a list that differs from the last one replaces it. A failed
 * fetch keeps the last list, is logged once per episode (and its end once), and is told to the
 * clients' listeners each time.
 */
export class AddressServerPoller {
  /** The last list fetched, as the address server wrote it; null before the first success. */
  current: string | null = null;
  private failing = false;
  private inFlight: Promise<void> | null = null;

  constructor(private readonly host: AddressServerHost) {}

  /** One fetch (concurrent callers share it); rejects with the AddressServerError when it failed. */
  fetch(): Promise<void> {
    this.inFlight ??= this.fetchOnce().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  /** The start's fetch: none when a list is there already; rejects when none could be had. */
  async ensureList(): Promise<void> {
    if (this.current === null) await this.fetch();
  }

  /** The periodic fetch: failures are reported (fetchOnce), never thrown. */
  poll(): Promise<void> {
    return this.fetch().catch(() => undefined);
  }

  private async fetchOnce(): Promise<void> {
    const { url } = this.host;
    let text: string;
    let addrs: string[];
    try {
      text = await fetchNameServerList(url, this.host.clock);
      try {
        addrs = parseNamesrvAddr(text);
      } catch (err) {
        throw new AddressServerError(url, `answered "${text.slice(0, 200)}", not a name server list`, { cause: err });
      }
    } catch (err) {
      const e = err as AddressServerError;
      if (!this.failing) {
        this.failing = true;
        const keeping = this.current === null ? 'no name server list yet' : `keeping ${this.current}`;
        this.host.logger.warn(`${e.message} (${keeping})`);
      }
      this.host.status({ addr: url, error: e });
      throw e;
    }
    if (this.failing) {
      this.failing = false;
      this.host.logger.info(`address server ${url} answers again`);
      this.host.status({ addr: url });
    }
    if (text !== this.current) {
      if (this.current !== null) this.host.logger.info(`name server address changed, old=${this.current}, new=${text}`);
      this.current = text;
      this.host.apply(addrs);
    }
  }
}
