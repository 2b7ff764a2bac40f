import createDebug from 'debug';
import { CliError, UsageError, type CliCommand, type CliIO } from './common.js';
import { didYouMean } from './did-you-mean.js';

/** Each command lives in lib/cli/<name>.ts and exports `command: CliCommand`. */
const COMMANDS = ['broker', 'produce', 'consume', 'request', 'recall', 'offsets', 'bench', 'decode', 'admin'] as const;

const log = createDebug('rocketwire:cli');

async function load(name: string): Promise<CliCommand | null> {
  if (!(COMMANDS as readonly string[]).includes(name)) return null;
  const mod = (await import(`./${name}.js`)) as { command: CliCommand };
  return mod.command;
}

function stdio(): CliIO {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
}

async function help(io: CliIO): Promise<void> {
  const lines = ['usage: rocketwire <command> [options]', '', 'commands:'];
  for (const name of COMMANDS) {
    const cmd = await load(name).catch(() => null);
    if (cmd) lines.push(`  ${name.padEnd(9)} ${cmd.summary}`);
  }
  lines.push(
    '',
    'rocketwire <command> --help shows the options of a command. Without --namesrv (-n), a command',
    'asks the name server in $NAMESRV_ADDR, else $ROCKETWIRE_NAMESRV. -t, -g and -c are short for',
    '--topic, --group and --count.',
  );
  io.stdout.write(lines.join('\n') + '\n');
}

/** "unknown command 'prodcue': did you mean 'produce'?" (or where the list of commands is). */
function unknownCommand(name: string): UsageError {
  const guess = name.startsWith('-') ? undefined : didYouMean(name, COMMANDS);
  return new UsageError(
    `unknown command '${name}'${guess !== undefined ? `: did you mean '${guess}'?` : ' (rocketwire help lists the commands)'}`,
  );
}

/** Output streams that have the EPIPE guard (one listener per stream however often main runs). */
const guarded = new WeakSet<NodeJS.WritableStream>();

/** Runs the CLI; resolves to the process exit code. Never throws. */
export async function main(argv: string[], io: CliIO = stdio()): Promise<number> {
  const [name, ...rest] = argv;
  // A reader that went away (rocketwire offsets | head -1) fails writes with EPIPE, an 'error'
  // event that ended the process with a stack trace: there is nobody left to tell.
  if (!guarded.has(io.stdout)) {
    guarded.add(io.stdout);
    io.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') log('stdout failed: %s', err.message);
    });
  }
  // Errors name the command, once there is one.
  let known = false;
  try {
    if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
      await help(io);
      return name === undefined ? 2 : 0;
    }
    if (name === '--version' || name === '-v') {
      io.stdout.write('rocketwire 0.1.0\n');
      return 0;
    }
    const cmd = await load(name);
    if (!cmd) throw unknownCommand(name);
    known = true;
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout.write(cmd.usage.endsWith('\n') ? cmd.usage : cmd.usage + '\n');
      return 0;
    }
    return await cmd.run(rest, io);
  } catch (err) {
    const e = err as Error & { exitCode?: number };
    // One line, no stack trace, unless the user asked for debug output.
    const message = (e?.message ? e.message : String(err)).split('\n')[0];
    io.stderr.write(`rocketwire${known ? ' ' + name : ''}: ${message}\n`);
    if (createDebug.enabled('rocketwire:cli') || createDebug.enabled('rocketwire:*')) {
      io.stderr.write(`${e?.stack ?? ''}\n`);
    }
    log('command %s failed: %O', name, err);
    return err instanceof CliError ? err.exitCode : 1;
  }
}
