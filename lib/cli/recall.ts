import { MessageValidationError, Producer } from '../producer/index.js';
import {
  CliError,
  UsageError,
  intOption,
  namesrvOption,
  oneLine,
  parseOptions,
  requiredOption,
  stringOption,
  type CliCommand,
  type CliIO,
} from './common.js';
import { brokerPortHint } from './broker-port-hint.js';

const usage = `usage: rocketwire recall [--namesrv ADDR] --topic T HANDLE [options]

Withdraws a timer message before it is delivered (Java's DefaultMQProducer#recallMessage,
RECALL_MESSAGE): HANDLE is the recall handle its send returned (rocketwire produce --delay-ms N
prints it as recallHandle=…). Prints the recalled message's id. The broker must serve recalls
(Apache 5.3+ and rocketwire broker with recallMessageEnable / --recall-message-enable; off by
default). Exits 1 when the broker refuses: a handle of another topic or broker, or a time already past.

options:
  -n, --namesrv ADDR   name server(s), "host:port[;host:port]" (default: $NAMESRV_ADDR, else
                       $ROCKETWIRE_NAMESRV)
  -t, --topic T        the message's topic
  -g, --group G        producer group (default rocketwire_recall)
  --namespace NS       Java's namespace: the topic is sent as NS%T
  --timeout MS         budget of the recall and the name server's answer (default 3000)
  --json               print {"msgId": …} as one JSON object
`;

/** Longest wait for the brokers to acknowledge the producer's unregistration at exit. */
const SHUTDOWN_BUDGET_MS = 500;

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseOptions(
    argv,
    {
      namesrv: { type: 'string' },
      topic: { type: 'string' },
      group: { type: 'string' },
      namespace: { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
    },
    true,
  );
  const str = (k: string): string | undefined => stringOption(values, k);
  const namesrv = namesrvOption(values);
  const topic = requiredOption(values, 'topic');
  if (positionals.length !== 1) throw new UsageError('give exactly one recall handle');
  const handle = positionals[0]!;
  const timeoutMs = intOption('timeout', str('timeout'), 3000, 1, 3_600_000);
  let producer: Producer;
  try {
    producer = new Producer({
      namesrvAddr: namesrv,
      group: str('group') ?? 'rocketwire_recall',
      namespace: str('namespace'),
      sendMsgTimeoutMs: timeoutMs,
      mqClientApiTimeoutMs: timeoutMs,
      connectTimeoutMs: Math.min(timeoutMs, 3000),
    });
  } catch (err) {
    throw new UsageError(oneLine(err));
  }
  try {
    try {
      await producer.start();
    } catch (err) {
      throw brokerPortHint(err, namesrv) ?? new CliError(oneLine(err), 1, { cause: err });
    }
    let msgId: string;
    try {
      msgId = await producer.recallMessage(topic, handle);
    } catch (err) {
      // a handle that does not decode is the user's input; a refusal is the broker's answer
      if (err instanceof MessageValidationError) throw new UsageError(oneLine(err));
      throw new CliError(oneLine(err), 1, { cause: err });
    }
    io.stdout.write(values.json === true ? `${JSON.stringify({ topic, msgId })}\n` : `recalled ${msgId} of ${topic}\n`);
    return 0;
  } finally {
    await producer.shutdown({ timeoutMs: Math.min(timeoutMs, SHUTDOWN_BUDGET_MS) }).catch(() => undefined);
  }
}

export const command: CliCommand = {
  summary: 'withdraw a timer message before it is delivered (recallMessage)',
  usage,
  run,
};
