/**
 * A bare remoting connection to a real name server or broker, built on the protocol/ codec only
 * (so the harness's readiness checks do not depend on lib/remoting), with the Java client's ACL
 * signature when asked.
 */
import { createHmac } from 'node:crypto';
import * as net from 'node:net';
import { decodeCommand, encodeCommand, FrameDecoder, type RemotingCommand } from '../../protocol/index.js';

export interface AclCredentials {
  accessKey: string;
  secretKey: string;
}

export interface TopicRoute {
  brokerDatas: Array<{ brokerName: string; cluster: string; brokerAddrs: Record<string, string> }>;
  queueDatas: Array<{ brokerName: string; perm: number; readQueueNums: number; writeQueueNums: number }>;
  [key: string]: unknown;
}

let nextOpaque = 1;

/**
 * A bare remoting connection (protocol/ codec only): requests are matched to responses by opaque;
 * requests the server sends (e.g. NOTIFY_CONSUMER_IDS_CHANGED) are collected in `serverRequests`.
 */
export class RawConnection {
  readonly serverRequests: RemotingCommand[] = [];
  /** Responses whose opaque matched no pending request (e.g. an answer to a oneway request). */
  readonly unmatchedResponses: RemotingCommand[] = [];
  private readonly sock: net.Socket;
  private readonly pending = new Map<
    number,
    { resolve: (c: RemotingCommand) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  private readonly connected: Promise<void>;
  private failure: Error | null = null;

  constructor(
    readonly addr: string,
    private readonly acl: AclCredentials | null = null,
  ) {
    const [host, port] = splitAddr(addr);
    this.sock = net.connect({ host, port: Number(port) });
    const decoder = new FrameDecoder();
    this.connected = new Promise((resolve, reject) => {
      this.sock.once('connect', resolve);
      this.sock.once('error', reject);
    });
    this.connected.catch(() => undefined);
    this.sock.on('data', (chunk) => {
      try {
        decoder.push(chunk, (frame) => {
          const cmd = decodeCommand(Buffer.from(frame));
          if ((cmd.flag & 1) === 0) {
            this.serverRequests.push(cmd);
            return;
          }
          const p = this.pending.get(cmd.opaque);
          if (!p) {
            this.unmatchedResponses.push(cmd);
            return;
          }
          this.pending.delete(cmd.opaque);
          clearTimeout(p.timer);
          p.resolve(cmd);
        });
      } catch (err) {
        this.fail(err as Error);
      }
    });
    this.sock.on('error', (err) => this.fail(err));
    this.sock.on('close', () => this.fail(new Error(`connection to ${addr} closed`)));
  }

  async invoke(request: RemotingCommand, timeoutMs = 5000): Promise<RemotingCommand> {
    await this.connected;
    if (this.failure) throw this.failure;
    const req: RemotingCommand = { ...request, opaque: nextOpaque++ };
    if (this.acl) req.extFields = signed(req, this.acl);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(req.opaque);
        reject(new Error(`no answer from ${this.addr} to request code ${req.code} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(req.opaque, { resolve, reject, timer });
      this.sock.write(encodeCommand(req));
    });
  }

  /** Send a oneway request (flag bit 1); nothing comes back. */
  async invokeOneway(request: RemotingCommand): Promise<void> {
    await this.connected;
    if (this.failure) throw this.failure;
    const req: RemotingCommand = { ...request, opaque: nextOpaque++, flag: request.flag | 2 };
    if (this.acl) req.extFields = signed(req, this.acl);
    this.sock.write(encodeCommand(req));
  }

  close(): void {
    this.sock.destroy();
    this.fail(new Error(`connection to ${this.addr} closed by the caller`));
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const [opaque, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(opaque);
      p.reject(this.failure);
    }
  }
}

/**
 * Send one request on a new TCP connection and wait for the response with the same opaque.
 * With `acl`, signs it the way the Java AclClientRPCHook does: HmacSHA1 (Base64) over the values of
 * all ext fields, AccessKey included, in key order, followed by the body.
 */
export async function rawInvoke(
  addr: string,
  request: RemotingCommand,
  options: { timeoutMs?: number; acl?: AclCredentials | null } = {},
): Promise<RemotingCommand> {
  const conn = new RawConnection(addr, options.acl ?? null);
  try {
    return await conn.invoke(request, options.timeoutMs ?? 5000);
  } finally {
    conn.close();
  }
}

function signed(req: RemotingCommand, acl: AclCredentials): Record<string, string> {
  const fields: Record<string, string> = { ...(req.extFields ?? {}), AccessKey: acl.accessKey };
  delete fields.Signature;
  const keys = Object.keys(fields).sort();
  const content = Buffer.concat([
    Buffer.from(keys.map((k) => fields[k]).join(''), 'utf8'),
    req.body ?? Buffer.alloc(0),
  ]);
  const signature = createHmac('sha1', acl.secretKey).update(content).digest('base64');
  return { ...fields, Signature: signature };
}

function splitAddr(addr: string): [string, string] {
  const i = addr.lastIndexOf(':');
  return [addr.slice(0, i).replace(/^\[|\]$/g, ''), addr.slice(i + 1)];
}

/** Parse a route body: standard JSON, or fastjson's form with unquoted numeric map keys. */
export function parseRouteBody(body: Buffer | null): TopicRoute {
  const text = body?.toString('utf8') ?? '';
  try {
    return JSON.parse(text) as TopicRoute;
  } catch {
    return JSON.parse(text.replace(/([{,])(-?\d+):/g, '$1"$2":')) as TopicRoute;
  }
}
