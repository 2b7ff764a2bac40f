import { AdminClient } from '../admin/index.js';
import { didYouMean } from './did-you-mean.js';
import {
  UsageError,
  intOption,
  namesrvOption,
  parseOptions,
  stringOption,
  type CliCommand,
  type CliIO,
  type OptionSpec,
} from './common.js';
import { brokerPortHint } from './broker-port-hint.js';
import { cluster } from './admin/cluster.js';
import { dlq } from './admin/dlq.js';
import { group } from './admin/group.js';
import { message } from './admin/message.js';
import { offset } from './admin/offset.js';
import { makeOutput, type AdminCommandGroup, type AdminSubcommand } from './admin/shared.js';
import { topic } from './admin/topic.js';
import { broker, producer } from './admin/broker.js';
import { stats } from './admin/stats.js';

const GROUPS: readonly AdminCommandGroup[] = [cluster, topic, group, message, offset, dlq, broker, producer, stats];

const SHARED: OptionSpec = {
  namesrv: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
};

const SHARED_HELP = `  --namesrv ADDR   name server(s), "host:port[;host:port]" (default: $NAMESRV_ADDR, else
                   $ROCKETWIRE_NAMESRV)
  --timeout MS     timeout of each request (default 3000)
  --json           one JSON document instead of a table`;

const SHORT_NOTE = '-n, -t, -g and -c are short for --namesrv, --topic, --group and --count.';

function groupLine(g: AdminCommandGroup): string {
  const subs = g.subcommands.map((s) => s.name).filter((n) => n !== '');
  return `  ${(g.name + (subs.length ? ' ' + subs.join('|') : '')).padEnd(52)} ${g.summary}`;
}

const usage = `usage: rocketwire admin <command> [subcommand] [--namesrv ADDR] [options] [--json]

Operations of Apache's mqadmin, over the remoting protocol, against a real cluster or the embedded
broker. Every command prints a table, or one JSON document with --json. An unknown topic or group
is one line naming it and exit 1; a write the broker refuses (NO_PERMISSION, ACL) says so.

commands:
${GROUPS.map(groupLine).join('\n')}

shared options:
${SHARED_HELP}

rocketwire admin help <command> [subcommand] shows a command's options.
${SHORT_NOTE}
`;

function subUsage(g: AdminCommandGroup, s: AdminSubcommand): string {
  const name = s.name ? `${g.name} ${s.name}` : g.name;
  return `usage: rocketwire admin ${name} [--namesrv ADDR] [options] [--json]\n\n${s.summary}\n\noptions:\n${SHARED_HELP}${s.help ? '\n' + s.help : ''}\n\n${SHORT_NOTE}\n`;
}

async function run(argv: string[], io: CliIO): Promise<number> {
  const [groupName, maybeSub, ...rest] = argv;
  if (groupName === 'help') {
    io.stdout.write(helpText(argv.slice(1)));
    return 0;
  }
  const g = GROUPS.find((x) => x.name === groupName);
  if (!g) {
    if (groupName === undefined) throw new UsageError('which admin command? (rocketwire admin --help lists them)');
    const guess = didYouMean(
      groupName,
      GROUPS.map((x) => x.name),
    );
    throw new UsageError(
      `unknown admin command '${groupName}'${guess !== undefined ? `: did you mean '${guess}'?` : ' (rocketwire admin --help lists them)'}`,
    );
  }
  let sub = g.subcommands.find((s) => s.name === '');
  let args = [maybeSub, ...rest].filter((a): a is string => a !== undefined);
  if (!sub) {
    sub = g.subcommands.find((s) => s.name === maybeSub);
    if (!sub) {
      const names = g.subcommands.map((s) => s.name).join(', ');
      if (maybeSub === undefined || maybeSub.startsWith('-'))
        throw new UsageError(`admin ${g.name} needs a subcommand: ${names}`);
      const guess = didYouMean(
        maybeSub,
        g.subcommands.map((x) => x.name),
      );
      throw new UsageError(
        `unknown subcommand '${g.name} ${maybeSub}'${guess !== undefined ? `: did you mean '${g.name} ${guess}'?` : ` (one of ${names})`}`,
      );
    }
    args = rest;
  }
  const { values, positionals } = parseOptions(args, { ...SHARED, ...sub.options }, sub.positional !== undefined);
  if (positionals.length > 1)
    throw new UsageError(`admin ${g.name} ${sub.name} takes one argument, got ${positionals.length}`);
  if (positionals.length === 1 && sub.positional !== undefined) {
    if (values[sub.positional] !== undefined)
      throw new UsageError(`give --${sub.positional} or the argument, not both`);
    values[sub.positional] = positionals[0]!;
  }
  const namesrv = namesrvOption(values);
  const timeoutMs = intOption('timeout', stringOption(values, 'timeout'), 3000, 1, 3_600_000);
  let admin: AdminClient;
  try {
    admin = new AdminClient({
      namesrvAddr: namesrv,
      mqClientApiTimeoutMs: timeoutMs,
      connectTimeoutMs: Math.min(timeoutMs, 3000),
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  try {
    await sub.run(admin, values, makeOutput(io, values.json === true));
    return 0;
  } catch (err) {
    throw brokerPortHint(err, namesrv) ?? err;
  } finally {
    await admin.close();
  }
}

/** `rocketwire admin help <command> [subcommand]`: that command's options. */
function helpText(argv: string[]): string {
  const g = GROUPS.find((x) => x.name === argv[0]);
  if (!g) return usage;
  const sub = g.subcommands.find((s) => s.name === '') ?? g.subcommands.find((s) => s.name === argv[1]);
  return sub
    ? subUsage(g, sub)
    : `${groupLine(g)}\n\n${g.subcommands.map((s) => `  rocketwire admin ${g.name} ${s.name.padEnd(12)} ${s.summary}`).join('\n')}\n`;
}

export const command: CliCommand = {
  summary: 'cluster, topic, group, message, offset, DLQ and stats operations of mqadmin',
  usage,
  run,
};
