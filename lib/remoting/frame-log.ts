import createDebug from '../debug.js';
import { RemotingFlag, type RemotingCommand } from '../../protocol/internal.js';

/** Every frame in and out, one line each (DEBUG=rocketwire:frames). */
export const logFrames = createDebug('rocketwire:frames');

export function describeFrame(cmd: RemotingCommand, size: number): string {
  const kind =
    (cmd.flag & RemotingFlag.RESPONSE) !== 0
      ? 'response'
      : (cmd.flag & RemotingFlag.ONEWAY) !== 0
        ? 'oneway'
        : 'request';
  return (
    `${kind} code=${cmd.code} opaque=${cmd.opaque} ${cmd.serializeType} ${size}B` +
    (cmd.remark ? ` remark=${JSON.stringify(cmd.remark)}` : '') +
    (cmd.extFields ? ` ext=${JSON.stringify(cmd.extFields)}` : '') +
    (cmd.body ? ` body=${cmd.body.length}B` : '')
  );
}
