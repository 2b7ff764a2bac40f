/**
 * Test helper of the capture doctor's unit tests: TCP connections whose frames are sent at given
 * capture times (seconds after T0), written into one pcap, decoded and diagnosed.
 */
import { CaptureDecoder } from '../../lib/capture/index.js';
import { CaptureDoctor, type DoctorOptions, type Finding } from '../../lib/capture/doctor/index.js';
import {
  createRequest,
  createResponse,
  encodeCommand,
  RequestCode,
  ResponseCode,
  type RemotingCommand,
} from '../../protocol/index.js';
import { LINKTYPE, pcap, TcpConnection, type Packet } from './build-pcap.js';

export const T0 = 1_700_000_000;

let nextPort = 50000;

/** One client connection to a broker (10.0.0.1:10911 unless told). */
export class Conn {
  readonly tcp: TcpConnection;
  readonly packets: Packet[] = [];
  private opaque = 1;

  constructor(server = { ip: '10.0.0.1', port: 10911 }, client = { ip: '10.0.0.5', port: nextPort++ }) {
    this.tcp = new TcpConnection(client, server, { ts: T0 - 1 }); // the handshake a second before T0
    this.packets.push(...this.tcp.handshake());
  }

  get client(): string {
    return `${this.tcp.client.ip}:${this.tcp.client.port}`;
  }
  get flow(): string {
    return `${this.client} -> ${this.tcp.server.ip}:${this.tcp.server.port}`;
  }

  newOpaque(): number {
    return this.opaque++;
  }

  /** A frame from the client at T0 + sec. */
  send(sec: number, cmd: RemotingCommand): RemotingCommand {
    this.tcp.ts = T0 + sec - 0.001; // the connection adds 1 ms per packet
    this.packets.push(...this.tcp.send(true, encodeCommand(cmd)));
    return cmd;
  }

  /** A frame from the broker at T0 + sec. */
  answer(sec: number, cmd: RemotingCommand): RemotingCommand {
    this.tcp.ts = T0 + sec - 0.001; // the connection adds 1 ms per packet
    this.packets.push(...this.tcp.send(false, encodeCommand(cmd)));
    return cmd;
  }

  /** A request sent at `sec` and, unless `rspSec` is null, answered with `code` at `rspSec`. */
  call(
    sec: number,
    code: number,
    extFields: Record<string, string>,
    rspSec: number | null,
    rsp: { code?: number; ext?: Record<string, string>; body?: Buffer; remark?: string } = {},
  ): RemotingCommand {
    const req = this.send(sec, createRequest(code, { opaque: this.newOpaque(), extFields }));
    if (rspSec !== null) {
      this.answer(
        rspSec,
        createResponse(req, rsp.code ?? ResponseCode.SUCCESS, {
          ...(rsp.ext ? { extFields: rsp.ext } : {}),
          ...(rsp.body ? { body: rsp.body } : {}),
          ...(rsp.remark ? { remark: rsp.remark } : {}),
        }),
      );
    }
    return req;
  }

  heartbeat(sec: number, rspSec: number | null = sec + 0.001): RemotingCommand {
    return this.call(sec, RequestCode.HEART_BEAT, {}, rspSec);
  }
}

/** A pull's extFields the way the push consumer sends them (FLAG_COMMIT_OFFSET | FLAG_SUSPEND when commitOffset > 0). */
export function pullExt(o: {
  group?: string;
  topic?: string;
  queueId?: number;
  offset: number;
  commit?: number;
  suspendMs?: number | null;
}): Record<string, string> {
  const suspend = o.suspendMs === undefined ? 15000 : o.suspendMs;
  const commit = o.commit ?? 0;
  const sysFlag = (commit > 0 ? 1 : 0) | (suspend !== null ? 2 : 0);
  return {
    consumerGroup: o.group ?? 'cg',
    topic: o.topic ?? 'T',
    queueId: String(o.queueId ?? 0),
    queueOffset: String(o.offset),
    maxMsgNums: '32',
    sysFlag: String(sysFlag),
    commitOffset: String(commit),
    suspendTimeoutMillis: String(suspend ?? 0),
    subVersion: '1',
    expressionType: 'TAG',
    bname: 'broker-a',
  };
}

export function diagnoseConns(conns: Conn[], options?: DoctorOptions): Finding[] {
  const packets = conns.flatMap((c) => c.packets).sort((a, b) => a.ts - b.ts);
  const file = pcap(packets, { linkType: LINKTYPE.raw });
  const doctor = new CaptureDoctor(options);
  const decoder = new CaptureDecoder({ frame: (f) => doctor.add(f), problem: () => {} });
  decoder.push(file);
  decoder.end();
  return doctor.finish();
}

export function pcapOf(conns: Conn[]): Buffer {
  return pcap(
    conns.flatMap((c) => c.packets).sort((a, b) => a.ts - b.ts),
    { linkType: LINKTYPE.raw },
  );
}
