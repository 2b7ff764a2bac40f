// A malicious name server and broker, for test/client/malicious-broker.test.ts and later suites of
// the client against a hostile peer: fake-cluster's scripted nodes (RemotingServer, the protocol
// codec, no real store) plus what a hostile peer does beyond answering: raw frames on the client's
// connection (responses to opaques never sent, floods, a frame header claiming 2 GiB), requests the
// broker initiates (CHECK_TRANSACTION_STATE, RESET_CONSUMER_CLIENT_OFFSET, CONSUME_MESSAGE_DIRECTLY,
// NOTIFY_CONSUMER_IDS_CHANGED) and stored records with any field set to anything.
//
//   const peer = await startMaliciousPeer({ routes: { T: routeJson([...]) } });
//   t.teardown(() => peer.close());
//   peer.pull = (req, from) => peer.pullAnswer(req, 'FOUND', { nextBeginOffset: 4, maxOffset: 4 }, records);
//   const conn = await peer.clientConnection();          // the broker's end of the client's connection
//   peer.writeRaw(conn, encodeCommand(cmd));              // any bytes, straight to the socket
//   await peer.flood(conn, 20_000, (i) => unmatchedResponse(i));
import type net from 'node:net';
import {
  createRequest,
  createResponse,
  encodeCommand,
  encodeStoredMessage,
  PullMessageResponseHeader,
  RemotingFlag,
  RequestCode,
  ResponseCode,
  type RemotingCommand,
} from '../../protocol/index.js';
import type { RemotingConnection } from '../../lib/remoting/index.js';
import { fakeConsumerBroker } from '../cli/fake-consumer-broker.js';
import { startFakeNameServer, type FakeNode } from './fake-cluster.js';

export type PullScript = (
  req: RemotingCommand,
  from: number,
) => RemotingCommand | null | Promise<RemotingCommand | null>;

export interface MaliciousPeer {
  /** The name server: answers GET_ROUTEINFO_BY_TOPIC from `routes` (topic → body text), changeable at any time. */
  readonly ns: FakeNode;
  readonly routes: Map<string, string>;
  /**
   * The broker: heartbeats, consumer list, no committed offset, commits recorded in `committed`,
   * GET_MIN_OFFSET / GET_MAX_OFFSET answering `minOffset` / `maxOffset`, PULL_MESSAGE and
   * LITE_PULL_MESSAGE answered by `pull`.
   */
  readonly broker: FakeNode & { committed: Map<number, number> };
  pull: PullScript;
  minOffset: number;
  maxOffset: number;
  /** Queue offsets of every pull received, in order. */
  readonly pulledAt: number[];
  /** A pull answer with the given status and header, and `records` as its body (FOUND). */
  pullAnswer(
    req: RemotingCommand,
    status: 'FOUND' | 'NO_NEW_MSG' | 'NO_MATCHED_MSG' | 'OFFSET_ILLEGAL',
    h: Partial<PullMessageResponseHeader>,
    records?: Buffer[],
  ): RemotingCommand;
  /** The broker's end of the first client connection (resolves once a client has connected). */
  clientConnection(): Promise<RemotingConnection>;
  /** Bytes straight to the connection's socket (no codec, no queue, no budget). */
  writeRaw(conn: RemotingConnection, bytes: Buffer): boolean;
  /** `n` frames built by `make(i)` written raw to `conn`, in batches that wait for the socket to drain. */
  flood(conn: RemotingConnection, n: number, make: (i: number) => RemotingCommand): Promise<void>;
  close(): Promise<void>;
}

const PULL_CODE: Record<string, number> = {
  FOUND: ResponseCode.SUCCESS,
  NO_NEW_MSG: ResponseCode.PULL_NOT_FOUND,
  NO_MATCHED_MSG: ResponseCode.PULL_RETRY_IMMEDIATELY,
  OFFSET_ILLEGAL: ResponseCode.PULL_OFFSET_MOVED,
};

export async function startMaliciousPeer(o: { routes?: Record<string, string> } = {}): Promise<MaliciousPeer> {
  const routes = new Map(Object.entries(o.routes ?? {}));
  const ns = await startFakeNameServer(routes);
  const pulledAt: number[] = [];
  let peer: MaliciousPeer;
  const onPull = (req: RemotingCommand): RemotingCommand | null | Promise<RemotingCommand | null> => {
    const from = Number(req.extFields!.queueOffset);
    pulledAt.push(from);
    return peer.pull(req, from);
  };
  const broker = await fakeConsumerBroker(onPull);
  broker.on(RequestCode.LITE_PULL_MESSAGE, onPull);
  broker.on(RequestCode.GET_MIN_OFFSET, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: String(peer.minOffset) } }),
  );
  broker.on(RequestCode.GET_MAX_OFFSET, (req) =>
    createResponse(req, ResponseCode.SUCCESS, { extFields: { offset: String(peer.maxOffset) } }),
  );
  peer = {
    ns,
    routes,
    broker,
    pulledAt,
    minOffset: 0,
    maxOffset: 0,
    pull: (req, from) => peer.pullAnswer(req, 'NO_NEW_MSG', { nextBeginOffset: from, maxOffset: from }),
    pullAnswer(req, status, h, records) {
      const header = { suggestWhichBrokerId: 0, nextBeginOffset: 0, minOffset: 0, maxOffset: 0, ...h };
      return createResponse(req, PULL_CODE[status]!, {
        remark: status,
        extFields: PullMessageResponseHeader.encode(header),
        body: status === 'FOUND' && records ? Buffer.concat(records) : null,
      });
    },
    async clientConnection() {
      for (;;) {
        const first = broker.server.connections.values().next();
        if (!first.done) return first.value;
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    writeRaw(conn, bytes) {
      return socketOf(conn).write(bytes);
    },
    async flood(conn, n, make) {
      const socket = socketOf(conn);
      for (let i = 0; i < n; ) {
        const batch: Buffer[] = [];
        for (const end = Math.min(n, i + 500); i < end; i++) batch.push(encodeCommand(make(i)));
        if (socket.destroyed) return;
        if (!socket.write(Buffer.concat(batch))) {
          await new Promise<void>((resolve) => {
            socket.once('drain', resolve);
            socket.once('close', resolve);
          });
        }
      }
    },
    async close() {
      await ns.close();
      await broker.close();
    },
  };
  return peer;
}

function socketOf(conn: RemotingConnection): net.Socket {
  return (conn as unknown as { socket: net.Socket }).socket;
}

/** A stored record (what a pull body holds) of topic `T`, queue `queueId`, at `queueOffset`. */
export function storedRecord(
  queueOffset: number,
  o: { queueId?: number; topic?: string; body?: Buffer; properties?: Record<string, string> } = {},
): Buffer {
  return encodeStoredMessage({
    topic: o.topic ?? 'T',
    queueId: o.queueId ?? 0,
    queueOffset,
    commitLogOffset: 1000 + (queueOffset % 1_000_000) * 200,
    body: o.body ?? Buffer.from(`m${queueOffset}`),
    properties: o.properties ?? { UNIQ_KEY: `U${queueOffset}` },
    bornTimestamp: 1,
    bornHost: '10.0.0.1:5000',
    storeTimestamp: 2,
    storeHost: '10.0.0.2:10911',
  });
}

/** A response frame for an opaque no client ever sent (negative opaques are never used by a client). */
export function unmatchedResponse(i: number): RemotingCommand {
  const r = createRequest(RequestCode.HEART_BEAT, {});
  r.flag |= RemotingFlag.RESPONSE;
  r.code = ResponseCode.SUCCESS;
  r.opaque = -1 - i;
  return r;
}
