import type { MessageExt } from '../../protocol/index.js';
import { Producer } from '../producer/index.js';
import type { CliIO } from './common.js';

/**
 * The replier of `rocketwire consume --reply TEXT`: each consumed request is answered with TEXT
 * (`{body}` replaced by the request's body) through its own producer (createReplyMessage + send,
 * SEND_REPLY_MESSAGE_V2). A message that is not a request, or a reply the broker refuses (the
 * requester is gone), is one line on stderr; the message still counts as consumed.
 */
export class CliReplier {
  replied = 0;
  failed = 0;

  private constructor(
    private readonly producer: Producer,
    private readonly template: string,
    private readonly err: CliIO['stderr'],
  ) {}

  static async start(namesrv: string, template: string, timeoutMs: number, err: CliIO['stderr']): Promise<CliReplier> {
    const producer = new Producer({
      namesrvAddr: namesrv,
      group: 'rocketwire_reply',
      sendMsgTimeoutMs: timeoutMs,
      mqClientApiTimeoutMs: timeoutMs,
      instanceName: `reply-${process.pid}`,
    });
    await producer.start();
    return new CliReplier(producer, template, err);
  }

  /** Answers `m`; never throws. */
  async reply(m: MessageExt): Promise<void> {
    const body = this.template.includes('{body}')
      ? this.template.split('{body}').join(m.body.toString('utf8'))
      : this.template;
    try {
      await this.producer.sendReply(m, body.length > 0 ? body : ' ');
      this.replied++;
    } catch (e) {
      this.failed++;
      const what = (e as Error).message.split('\n')[0];
      this.err.write(
        `rocketwire consume: no reply to ${m.msgId} (${m.topic}/${m.queueId}@${m.queueOffset}): ${what}\n`,
      );
    }
  }

  shutdown(): Promise<void> {
    return this.producer.shutdown({ timeoutMs: 500 });
  }
}
