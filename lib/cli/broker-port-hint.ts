// Apart from common.ts because decode, which loads common.ts, must not load the remoting errors
// (and through them protocol/index.js): test/capture/decode-modules.test.ts.
import { RequestCode, requestCodeName, ResponseCode } from '../../protocol/codes.js';
import { BrokerError } from '../remoting/errors.js';
import { CliError } from './common.js';

/** Requests only a name server serves: a broker answers them REQUEST_CODE_NOT_SUPPORTED. */
const NAMESRV_ONLY_CODES: ReadonlySet<number> = new Set([
  RequestCode.GET_ROUTEINFO_BY_TOPIC,
  RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
]);

/**
 * A broker's port given as the name server answers GET_ROUTEINFO_BY_TOPIC (and every name-server
 * request) with REQUEST_CODE_NOT_SUPPORTED "request type 105 not supported", which does not say
 * what is wrong. Returns the one-line CliError that does, or null when `err` (or a cause of it) is
 * not that answer.
 */
export function brokerPortHint(err: unknown, namesrv: string): CliError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (!(e instanceof BrokerError) || e.code !== ResponseCode.REQUEST_CODE_NOT_SUPPORTED) continue;
    // MQClientInstance and AdminClient name the name server "name server" in their errors; the
    // two codes only a name server serves say it too, should that naming change.
    if (e.addr !== 'name server' && !NAMESRV_ONLY_CODES.has(e.requestCode ?? -1)) continue;
    const addrs = namesrv
      .split(';')
      .map((a) => a.trim())
      .filter(Boolean);
    const call = e.requestCode !== undefined ? requestCodeName(e.requestCode) : 'a name-server request';
    const what = `${call} got REQUEST_CODE_NOT_SUPPORTED; a name server listens on 9876 unless told otherwise`;
    return addrs.length === 1
      ? new CliError(`${addrs[0]} answered like a broker: is this the broker port? (${what})`, 1, { cause: err })
      : new CliError(`one of ${addrs.join(';')} answered like a broker: is one of them a broker port? (${what})`, 1, {
          cause: err,
        });
  }
  return null;
}
