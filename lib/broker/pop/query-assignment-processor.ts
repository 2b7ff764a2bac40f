import * as path from 'node:path';
import createDebug from '../../debug.js';
import { Operations, ResponseCode, RETRY_GROUP_TOPIC_PREFIX } from '../../../protocol/internal.js';
import type {
  MessageQueueAssignment,
  MessageRequestMode,
  SetMessageRequestModeRequestBody,
} from '../../../protocol/body/pop-bodies.js';
import { QueryAssignmentResponseBody } from '../../../protocol/body/pop-bodies.js';
import type { RemotingServer } from '../../remoting/index.js';
import { loadConfigFile, stderrWarn, writeFileAtomic, type StoreWarn } from '../atomic-file.js';
import { StoreFileFormatError } from '../errors.js';
import type { BrokerContext } from '../processor/broker-context.js';
import { fail, ok, registerOperation, type Answer } from '../processor/request-processor.js';

const log = createDebug('rocketwire:broker:pop');

/**
 * The request mode of each topic@group (B/loadbalance/MessageRequestModeManager), persisted to
 * `<store>/config/messageRequestMode.json` as Apache's `{"messageRequestModeMap":{topic:{group:{…}}}}`.
 * The default is PULL; %RETRY% topics are always PULL.
 */
export class MessageRequestModeManager {
  readonly file: string;
  private readonly table = new Map<string, SetMessageRequestModeRequestBody>();
  private loaded = false;

  constructor(
    storeDir: string,
    private readonly warn: StoreWarn = stderrWarn,
  ) {
    this.file = path.join(storeDir, 'config', 'messageRequestMode.json');
  }

  load(): void {
    const m = loadConfigFile(
      this.file,
      (text) => {
        const o = JSON.parse(text) as {
          messageRequestModeMap?: Record<string, Record<string, SetMessageRequestModeRequestBody>>;
        };
        if (!o || typeof o !== 'object') throw new StoreFileFormatError('not an object');
        return o.messageRequestModeMap ?? {};
      },
      this.warn,
    );
    for (const [topic, groups] of Object.entries(m ?? {})) {
      for (const [group, b] of Object.entries(groups)) {
        if (b.mode === 'POP' || b.mode === 'PULL')
          this.table.set(`${topic}@${group}`, {
            topic,
            consumerGroup: group,
            mode: b.mode,
            popShareQueueNum: Number(b.popShareQueueNum) || 0,
          });
      }
    }
    this.loaded = true;
  }

  get(topic: string, group: string): SetMessageRequestModeRequestBody | undefined {
    return this.table.get(`${topic}@${group}`);
  }

  set(b: SetMessageRequestModeRequestBody): void {
    this.table.set(`${b.topic}@${b.consumerGroup}`, b);
    this.persist();
  }

  private persist(): void {
    if (!this.loaded) return;
    const map: Record<string, Record<string, SetMessageRequestModeRequestBody>> = {};
    for (const b of this.table.values()) (map[b.topic] ??= {})[b.consumerGroup] = b;
    try {
      writeFileAtomic(this.file, JSON.stringify({ messageRequestModeMap: map }, null, 2), true, true);
    } catch (err) {
      log('cannot write %s: %s', this.file, (err as Error).message);
    }
  }
}

/**
 * QueryAssignmentProcessor: QUERY_ASSIGNMENT (400) and SET_MESSAGE_REQUEST_MODE (401). The
 * embedded broker knows only its own queues, so it assigns among them: for POP with
 * popShareQueueNum ≤ 0 (the default) every client gets this broker with queueId −1, as Apache's
 * allocate4Pop; for PULL the queues are shared averagely (AVG) among the group's clients.
 */
export class QueryAssignmentProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    readonly modes: MessageRequestModeManager,
  ) {}

  register(server: RemotingServer): void {
    registerOperation(server, Operations.SET_MESSAGE_REQUEST_MODE, ({ body }) => this.setMode(body));
    registerOperation(server, Operations.QUERY_ASSIGNMENT, ({ body }) => {
      const mode: MessageRequestMode = body.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)
        ? 'PULL'
        : (this.modes.get(body.topic, body.consumerGroup)?.mode ?? 'PULL');
      const share = this.modes.get(body.topic, body.consumerGroup)?.popShareQueueNum ?? -1;
      const config = this.ctx.topics.get(body.topic);
      let assignments: MessageQueueAssignment[] | null = null;
      const known = body.strategyName === 'AVG' || body.strategyName === 'AVG_BY_CIRCLE';
      if (config && known) {
        const brokerName = this.ctx.brokerName;
        const all = Array.from({ length: config.readQueueNums }, (_, queueId) => ({
          topic: body.topic,
          brokerName,
          queueId,
        }));
        if (body.messageModel === 'BROADCASTING') {
          assignments = all.map((messageQueue) => ({ messageQueue, mode }));
        } else {
          const cids = (this.ctx.consumers.find(body.consumerGroup)?.clientIds() ?? []).slice().sort();
          if (mode === 'POP' && (share <= 0 || share >= cids.length - 1)) {
            assignments = [{ messageQueue: { topic: body.topic, brokerName, queueId: -1 }, mode }];
          } else {
            const i = cids.indexOf(body.clientId);
            assignments = i < 0 ? [] : averagely(all, i, cids.length).map((messageQueue) => ({ messageQueue, mode }));
          }
        }
      }
      return ok({ body: QueryAssignmentResponseBody.encode({ messageQueueAssignments: assignments }) });
    });
  }

  private setMode(b: SetMessageRequestModeRequestBody): Answer {
    if (b.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX))
      return fail(ResponseCode.NO_PERMISSION, 'retry topic is not allowed to set mode');
    if (!this.ctx.topics.get(b.topic)) return fail(ResponseCode.TOPIC_NOT_EXIST, `topic[${b.topic}] not exist`);
    this.modes.set(b);
    log('request mode of %s@%s is now %s (popShareQueueNum %d)', b.topic, b.consumerGroup, b.mode, b.popShareQueueNum);
    return ok();
  }
}

/** AllocateMessageQueueAveragely for client `index` of `n`. */
function averagely<T>(all: T[], index: number, n: number): T[] {
  const mod = all.length % n;
  const size =
    all.length <= n ? 1 : mod > 0 && index < mod ? Math.floor(all.length / n) + 1 : Math.floor(all.length / n);
  const start = mod > 0 && index < mod ? index * size : index * size + mod;
  const range = Math.min(size, all.length - start);
  const out: T[] = [];
  for (let i = 0; i < range; i++) out.push(all[(start + i) % all.length]!);
  return out;
}
