import { startBroker } from '../broker/index.js';
import { UsageError, intOption, parseOptions, stringOption, type CliCommand, type CliIO } from './common.js';

const usage = `usage: rocketwire broker [options]

Runs an embedded name server and N brokers in this process (data survives restarts with --data).
When ready, prints one JSON line:
  {"event":"ready","namesrv":"127.0.0.1:9876","broker":"127.0.0.1:10911","brokers":[...],"data":"DIR"}
SIGTERM / SIGINT shut down cleanly (offsets persisted, files closed).

options:
  --namesrv-port N   name-server port (default 9876; 0 = any free port)
  --broker-port N    first broker's port (default 10911; the next brokers use N+1, ...; 0 = free ports)
  --brokers N        number of brokers: broker-a, broker-b, ... (default 1)
  --data DIR         store folder (default: a temporary folder, removed at exit)
  --queues N         queues of TBW102 = most queues an auto-created topic gets (default 8)
  --host ADDR        address to listen on and advertise (default 127.0.0.1; 0.0.0.0 listens on
                     every interface and advertises the first external IPv4 address)
  --no-auto-create   answer TOPIC_NOT_EXIST for unknown topics instead of creating them
  --enable-property-filter
                     serve SQL92 subscriptions (consume --sql), as Java's enablePropertyFilter=true
  --recall-message-enable
                     serve RECALL_MESSAGE (rocketwire recall), as Java's recallMessageEnable=true
  --sql-max-length N --sql-max-nodes N --sql-evaluation-budget N
                     bounds of a SQL92 expression (default 65536 characters, 4096 nodes) and the
                     evaluation steps one pull may spend (default 100000); docs/hardening.md
  --segment-size N   commit-log segment size in bytes (default 67108864)
  --file-reserved-time H            hours a commit-log segment is kept after its last write
                     (default 72, Java's fileReservedTime; fractions allowed; 0 = keep everything)
  --delete-when HH   hours of the day expired segments are deleted, e.g. 04 or "04;16" (default 04)
  --disk-max-used-space-ratio N     disk use (%) above which expired segments go at any hour
                     (default 75; above 85 % the oldest go whatever their age, as Java)
  --clean-resource-interval MS      how often retention looks (default 10000)
  --delay-levels S   Java messageDelayLevel, e.g. "1s 5s 10s" (default the 18 standard levels)
  --idle-timeout S   close a connection after S seconds without a byte read or written
                     (default 120, as Java's serverChannelMaxIdleTimeSeconds; 0 = never)
  --transaction-check-interval MS   how often unresolved half messages are checked back
                     (default 30000, Java's transactionCheckInterval)
  --transaction-timeout MS          age a half message reaches before its first check
                     (default 6000, Java's transactionTimeOut)
  --acl FILE         access control: Apache's ACL 1.0 plain_acl.yml (or JSON of the same shape);
                     requests then need a signed AccessKey (Java's AclClientRPCHook, the acl
                     option of rocketwire's clients) or a white-listed address (default: none)
  --auth USER:PASSWORD              5.x auth (ACL 2.0): every request must be signed by a stored user
                     and allowed by its ACL; USER is made a Super user at start when absent (Java's
                     initAuthenticationUser). Manage users and ACLs with rocketwire admin auth
  --timer-max-in-memory N           most pending timer messages held in memory (default 100000;
                     the rest wait in the timer queue and are read back in time)
`;

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions(argv, {
    'namesrv-port': { type: 'string' },
    'broker-port': { type: 'string' },
    brokers: { type: 'string' },
    data: { type: 'string' },
    queues: { type: 'string' },
    host: { type: 'string' },
    'no-auto-create': { type: 'boolean' },
    'enable-property-filter': { type: 'boolean' },
    'recall-message-enable': { type: 'boolean' },
    'sql-max-length': { type: 'string' },
    'sql-max-nodes': { type: 'string' },
    'sql-evaluation-budget': { type: 'string' },
    'segment-size': { type: 'string' },
    'file-reserved-time': { type: 'string' },
    'delete-when': { type: 'string' },
    'disk-max-used-space-ratio': { type: 'string' },
    'clean-resource-interval': { type: 'string' },
    'delay-levels': { type: 'string' },
    'idle-timeout': { type: 'string' },
    'transaction-check-interval': { type: 'string' },
    'transaction-timeout': { type: 'string' },
    acl: { type: 'string' },
    auth: { type: 'string' },
    'timer-max-in-memory': { type: 'string' },
  });
  const str = (k: string): string | undefined => stringOption(values, k);
  const namesrvPort = intOption('namesrv-port', str('namesrv-port'), 9876, 0, 65535);
  const brokerPort = intOption('broker-port', str('broker-port'), 10911, 0, 65535);
  const brokers = intOption('brokers', str('brokers'), 1, 1, 64);
  const queues = intOption('queues', str('queues'), 8, 1, 1024);
  const segmentSize = intOption('segment-size', str('segment-size'), 64 * 1024 * 1024, 4096, 1024 * 1024 * 1024);
  const idleTimeoutS = intOption('idle-timeout', str('idle-timeout'), 120, 0, 24 * 3600);
  const transactionCheckInterval = intOption(
    'transaction-check-interval',
    str('transaction-check-interval'),
    30_000,
    1,
    2 ** 31 - 1,
  );
  const transactionTimeOut = intOption('transaction-timeout', str('transaction-timeout'), 6000, 0, 2 ** 31 - 1);
  const timerMaxInMemory = intOption('timer-max-in-memory', str('timer-max-in-memory'), 100_000, 1, 2 ** 26);
  const sqlInt = (k: string): number | undefined =>
    str(k) === undefined ? undefined : intOption(k, str(k), 0, 1, 2 ** 31 - 1);
  const reserved = str('file-reserved-time');
  const fileReservedTime = reserved === undefined ? undefined : Number(reserved);
  if (fileReservedTime !== undefined && !(reserved!.trim() !== '' && fileReservedTime >= 0))
    throw new UsageError(`--file-reserved-time must be a number of hours >= 0, got ${JSON.stringify(reserved)}`);
  const ratio = str('disk-max-used-space-ratio');
  const interval = str('clean-resource-interval');
  const host = str('host') ?? '127.0.0.1';
  if (!host.trim()) throw new UsageError('--host must not be empty');
  const acl = str('acl');
  if (acl !== undefined && !acl.trim()) throw new UsageError('--acl needs a file name');
  const authArg = str('auth');
  const colon = authArg?.indexOf(':') ?? -1;
  if (authArg !== undefined && (colon < 1 || colon === authArg.length - 1))
    throw new UsageError(`--auth takes USER:PASSWORD (the initial Super user), got ${JSON.stringify(authArg)}`);
  if (authArg !== undefined && acl !== undefined) throw new UsageError('--auth and --acl exclude each other');
  const auth =
    authArg === undefined
      ? undefined
      : {
          authenticationEnabled: true,
          authorizationEnabled: true,
          initAuthenticationUser: { username: authArg.slice(0, colon), password: authArg.slice(colon + 1) },
        };

  let embedded: Awaited<ReturnType<typeof startBroker>>;
  try {
    embedded = await startBroker({
      host,
      namesrvPort,
      brokerPort,
      brokers,
      dataDir: str('data'),
      queues,
      autoCreateTopic: values['no-auto-create'] !== true,
      enablePropertyFilter: values['enable-property-filter'] === true,
      recallMessageEnable: values['recall-message-enable'] === true,
      sqlMaxLength: sqlInt('sql-max-length'),
      sqlMaxNodes: sqlInt('sql-max-nodes'),
      sqlEvaluationBudget: sqlInt('sql-evaluation-budget'),
      segmentSize,
      messageDelayLevel: str('delay-levels'),
      idleTimeoutMs: idleTimeoutS * 1000,
      transactionCheckInterval,
      transactionTimeOut,
      acl,
      auth,
      timerMaxInMemory,
      fileReservedTime,
      deleteWhen: str('delete-when'),
      diskMaxUsedSpaceRatio:
        ratio === undefined ? undefined : intOption('disk-max-used-space-ratio', ratio, 75, 1, 100),
      cleanResourceInterval:
        interval === undefined ? undefined : intOption('clean-resource-interval', interval, 10_000, 1, 2 ** 31 - 1),
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE')
      throw new UsageError(`port already in use (${e.message}); pass --namesrv-port 0 --broker-port 0 for free ports`);
    throw err;
  }
  io.stdout.write(
    JSON.stringify({
      event: 'ready',
      namesrv: embedded.namesrv,
      broker: embedded.broker,
      brokers: embedded.brokers,
      data: embedded.dataDir,
    }) + '\n',
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  // a second signal while closing, or a close that hangs, must not keep the process alive
  const force = setTimeout(() => process.exit(1), 5000);
  force.unref();
  await embedded.close();
  clearTimeout(force);
  return 0;
}

export const command: CliCommand = {
  summary: 'run an embedded name server and broker(s) that RocketMQ clients accept',
  usage,
  run,
};
