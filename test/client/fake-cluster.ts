/**
 * Scripted fake name server and brokers on 127.0.0.1:0, built on RemotingServer. Each node records the
 * requests it gets and answers through handlers the test sets per request code. Shared by the client,
 * producer and CLI tests.
 */
import { createResponse, RequestCode, ResponseCode, type RemotingCommand } from '../../protocol/index.js';
import { RemotingServer, type RemotingConnection } from '../../lib/remoting/index.js';

export type Handler = (
  req: RemotingCommand,
  conn: RemotingConnection,
) => Promise<RemotingCommand | null> | RemotingCommand | null;

export class FakeNode {
  readonly requests: RemotingCommand[] = [];
  private readonly handlers = new Map<number, Handler>();
  constructor(
    readonly server: RemotingServer,
    readonly addr: string,
  ) {}

  /** Answers `code` with `handler` (replacing an earlier one); every request is recorded first. */
  on(code: number, handler: Handler): this {
    const known = this.handlers.has(code);
    this.handlers.set(code, handler);
    if (!known) {
      this.server.registerProcessor(code, (req, conn) => {
        // Keep a copy: the body is a view into the receive buffer.
        this.requests.push({
          ...req,
          extFields: req.extFields ? { ...req.extFields } : null,
          body: req.body ? Buffer.from(req.body) : null,
        });
        return this.handlers.get(code)!(req, conn);
      });
    }
    return this;
  }

  requestsOf(code: number): RemotingCommand[] {
    return this.requests.filter((r) => r.code === code);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

export async function startFakeNode(): Promise<FakeNode> {
  const server = new RemotingServer();
  const { host, port } = await server.listen(0, '127.0.0.1');
  return new FakeNode(server, `${host}:${port}`);
}

/** A route body in the standard JSON a 4.9.8 name server sends to version-409 clients. */
export function routeJson(
  brokers: { name: string; addrs: Record<string, string>; queues?: number; perm?: number; readQueues?: number }[],
): string {
  const brokerDatas = brokers.map((b) => ({ brokerAddrs: b.addrs, brokerName: b.name, cluster: 'DefaultCluster' }));
  const queueDatas = brokers.map((b) => ({
    brokerName: b.name,
    perm: b.perm ?? 6,
    readQueueNums: b.readQueues ?? b.queues ?? 4,
    topicSysFlag: 0,
    writeQueueNums: b.queues ?? 4,
  }));
  return JSON.stringify({ brokerDatas, filterServerTable: {}, queueDatas });
}

/** A name server answering GET_ROUTEINFO_BY_TOPIC from `routes` (topic → body text), TOPIC_NOT_EXIST otherwise. */
export async function startFakeNameServer(routes: Map<string, string>): Promise<FakeNode> {
  const ns = await startFakeNode();
  ns.on(RequestCode.GET_ROUTEINFO_BY_TOPIC, (req) => {
    const topic = req.extFields?.topic ?? '';
    const body = routes.get(topic);
    if (body === undefined) {
      return createResponse(req, ResponseCode.TOPIC_NOT_EXIST, {
        remark: `No topic route info in name server for the topic: ${topic}`,
      });
    }
    return createResponse(req, ResponseCode.SUCCESS, { body: Buffer.from(body) });
  });
  return ns;
}

/**
 * A broker that accepts heartbeats and stores sends in memory: answers SUCCESS with msgId, queueId,
 * queueOffset (per-queue counters), MSG_REGION and TRACE_ON like a real broker.
 */
export async function startFakeBroker(): Promise<FakeNode & { stored: RemotingCommand[] }> {
  const b = (await startFakeNode()) as FakeNode & { stored: RemotingCommand[] };
  b.stored = [];
  const offsets = new Map<string, number>();
  b.on(RequestCode.HEART_BEAT, (req) => createResponse(req, ResponseCode.SUCCESS, { version: 409 }));
  b.on(RequestCode.UNREGISTER_CLIENT, (req) => createResponse(req, ResponseCode.SUCCESS));
  const send: Handler = (req) => {
    const ext = req.extFields ?? {};
    const topic = ext.b ?? ext.topic ?? '';
    const queueId = Number(ext.e ?? ext.queueId ?? 0);
    const key = `${topic}:${queueId}`;
    const off = offsets.get(key) ?? 0;
    offsets.set(key, off + 1);
    b.stored.push(b.requests[b.requests.length - 1]!);
    return createResponse(req, ResponseCode.SUCCESS, {
      extFields: {
        msgId: '7F00000100002A9F' + off.toString(16).toUpperCase().padStart(16, '0'),
        queueId: String(queueId),
        queueOffset: String(off),
        MSG_REGION: 'DefaultRegion',
        TRACE_ON: 'true',
      },
    });
  };
  b.on(RequestCode.SEND_MESSAGE_V2, send);
  b.on(RequestCode.SEND_MESSAGE, send);
  b.on(RequestCode.SEND_BATCH_MESSAGE, send);
  return b;
}

/** An address nothing listens on (a port that was just free). */
export async function refusedAddress(): Promise<string> {
  const s = new RemotingServer();
  const { host, port } = await s.listen(0, '127.0.0.1');
  await s.close();
  return `${host}:${port}`;
}
