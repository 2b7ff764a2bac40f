/**
 * Drives Toxiproxy (Shopify's fault-injection TCP proxy, built by .ci/install-deps into
 * ${ROCKETWIRE_CACHE:-~/.cache/rocketwire}/toxiproxy-<version>/toxiproxy-server) through its HTTP API,
 * for network faults between rocketwire and real brokers: this kernel has no netem qdisc.
 *
 *   const toxi = await startToxiproxy();              // its own process on a picked port; toxi.stop()
 *   const ns = await toxi.createProxy('namesrv', '127.0.0.1:0', cluster.namesrv);  // ns.listen: where clients go
 *   await toxi.addToxic('namesrv', { type: 'latency', attributes: { latency: 50, jitter: 20 } });
 *   await toxi.setEnabled('namesrv', false);          // a partition: listener closed, connections cut
 *   await toxi.reset();                               // every proxy enabled, every toxic removed
 *
 * Toxic types (Toxiproxy 2.x): latency {latency, jitter} ms, bandwidth {rate} KB/s, slow_close
 * {delay}, timeout {timeout} ms (data stops; the connection is closed after `timeout`, never with
 * 0), reset_peer {timeout} (TCP RST after `timeout` ms), slicer, limit_data {bytes}. `stream` is
 * 'downstream' (server → client, the default) or 'upstream'.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { cacheDir, delay, trackProcess } from './harness.js';

/** The version .ci/install-deps builds (the newest the Go module proxy serves here). */
export const TOXIPROXY_VERSION = 'v2.5.0';

export function toxiproxyBinary(): string {
  return process.env.ROCKETWIRE_TOXIPROXY ?? join(cacheDir(), `toxiproxy-${TOXIPROXY_VERSION}`, 'toxiproxy-server');
}

export function toxiproxyPresent(): boolean {
  return existsSync(toxiproxyBinary());
}

export interface ToxicSpec {
  type: 'latency' | 'bandwidth' | 'slow_close' | 'timeout' | 'reset_peer' | 'slicer' | 'limit_data';
  /** Default `${type}_${stream}`. */
  name?: string;
  stream?: 'upstream' | 'downstream';
  /** 0..1, default 1. */
  toxicity?: number;
  attributes?: Record<string, number>;
}

export interface ToxiProxyInfo {
  name: string;
  /** host:port Toxiproxy listens on for this proxy. */
  listen: string;
  upstream: string;
  enabled: boolean;
}

export class Toxiproxy {
  constructor(
    /** http://127.0.0.1:port of the API. */
    readonly api: string,
    private readonly child: ReturnType<typeof spawn>,
  ) {}

  /** A proxy from `listen` ('127.0.0.1:0' = a port Toxiproxy picks) to `upstream`. */
  async createProxy(name: string, listen: string, upstream: string): Promise<ToxiProxyInfo> {
    return (await this.call('POST', '/proxies', { name, listen, upstream, enabled: true })) as ToxiProxyInfo;
  }

  async addToxic(proxy: string, toxic: ToxicSpec): Promise<string> {
    const stream = toxic.stream ?? 'downstream';
    const name = toxic.name ?? `${toxic.type}_${stream}`;
    await this.call('POST', `/proxies/${proxy}/toxics`, {
      name,
      type: toxic.type,
      stream,
      toxicity: toxic.toxicity ?? 1,
      attributes: toxic.attributes ?? {},
    });
    return name;
  }

  async removeToxic(proxy: string, name: string): Promise<void> {
    await this.call('DELETE', `/proxies/${proxy}/toxics/${name}`);
  }

  /** Disabled: the listener is closed and every connection through the proxy is cut (a partition). */
  async setEnabled(proxy: string, enabled: boolean): Promise<void> {
    await this.call('POST', `/proxies/${proxy}`, { enabled });
  }

  /** Enable every proxy and remove every toxic. */
  async reset(): Promise<void> {
    await this.call('POST', '/reset');
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    // The child is unref'd (it must not keep a finished test alive): ref it, or nothing keeps the
    // event loop running until its 'exit' and this promise never settles.
    this.child.ref();
    this.child.kill('SIGKILL');
    await exited;
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(this.api + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`toxiproxy ${method} ${path}: HTTP ${res.status} ${text}`);
    return text ? (JSON.parse(text) as unknown) : null;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Start toxiproxy-server on a free loopback port; resolves once its API answers. */
export async function startToxiproxy(): Promise<Toxiproxy> {
  const bin = toxiproxyBinary();
  if (!existsSync(bin)) throw new Error(`toxiproxy-server not found at ${bin} (.ci/install-deps builds it)`);
  const port = await freePort();
  const child = spawn(bin, ['-host', '127.0.0.1', '-port', String(port)], { stdio: ['ignore', 'ignore', 'ignore'] });
  child.unref();
  trackProcess(child);
  const api = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const res = await fetch(`${api}/version`);
      if (res.ok) return new Toxiproxy(api, child);
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`toxiproxy-server exited with code ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('toxiproxy-server did not answer within 10 s');
    await delay(50);
  }
}
