/**
 * Runs a real Apache RocketMQ name server and broker(s) for the interop suite, from the jars that
 * test/interop/fetch-jars.sh put in ${ROCKETWIRE_CACHE:-~/.cache/rocketwire}/rmq-<version>/lib.
 *
 *   const cluster = await startRealCluster({ version: '5.3.3', brokers: 1 });
 *   t.teardown(() => cluster.stop());
 *   await cluster.createTopic('T1', { queues: 4 });
 *   ... cluster.namesrv ('127.0.0.1:port'), cluster.brokers[0] ('127.0.0.1:port') ...
 *
 * Every JVM listens on loopback ports picked at run time and stores on a temporary folder under
 * /dev/shm (the broker refuses writes on a disk more than 90 % full, so tmpfs keeps it away from
 * the real disk). No JVM outlives the test process: an 'exit' hook SIGKILLs them, and a small
 * watchdog shell, fed by a pipe from this process, stops them and removes the folders if this
 * process dies without running its hooks (SIGKILL, a runner's timeout).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { logbackFlag, runRoot, startJvm, stopJvm, tailOf, trackDir, untrackDir, waitForLine, type Jvm } from './jvm.js';
import { ensureJars, jarsDir, V5_VERSION } from './maven-jars.js';
import { RawConnection, rawInvoke } from './raw-remoting.js';
import { bootBroker, pickPort, releaseBrokerPorts, writePlainAcl, writeV4Logback } from './real-broker.js';
import {
  brokerAt,
  CLUSTER_NAME,
  direct,
  type BrokerSlot,
  type ClusterContext,
  type RealCluster,
  type RealClusterOptions,
  running,
} from './real-cluster-model.js';
import { startProxy } from './real-proxy.js';
import { createTopic, waitForBrokerIds, waitForReplica, waitForRoute } from './real-routes.js';

export async function startRealCluster(options: RealClusterOptions = {}): Promise<RealCluster> {
  const version = options.version ?? V5_VERSION;
  await ensureJars([version]);
  const v4 = version.startsWith('4.');
  const lib = jarsDir(version);
  const dir = mkdtempSync(join(runRoot(), `rocketwire-rmq-${version}-`));
  trackDir(dir);
  const home = join(dir, 'home');
  mkdirSync(join(home, 'conf'), { recursive: true });
  if (v4) writeV4Logback(home);
  if (v4 && options.acl) writePlainAcl(home, options.acl);

  const stopped = { all: false };

  // Name server. 5.x binds 127.0.0.1 and may take port 0 (the boot line then names the port);
  // 4.9 always binds every interface and does not print its port, so it gets a picked one.
  const nsHome = join(dir, 'namesrv');
  mkdirSync(nsHome);
  const nsPort = v4 ? await pickPort() : 0;
  const nsConf = join(nsHome, 'namesrv.conf');
  const controllerAddr = options.controller ? `127.0.0.1:${await pickPort()}` : '';
  if (options.controller && v4) throw new Error(`RocketMQ ${version} has no controller mode (5.x only)`);
  writeFileSync(
    nsConf,
    `listenPort=${nsPort}\nbindAddress=127.0.0.1\nkvConfigPath=${join(nsHome, 'kvConfig.json')}\n${
      options.controller
        ? [
            'enableControllerInNamesrv=true',
            'controllerDLegerGroup=group1',
            `controllerDLegerPeers=n0-${controllerAddr}`,
            'controllerDLegerSelfId=n0',
            `controllerStorePath=${join(nsHome, 'controller')}`,
            'enableElectUncleanMaster=false',
            'notifyBrokerRoleChanged=true',
            '',
          ].join('\n')
        : ''
    }`,
  );
  const nsStart = Date.now();
  let nsJvm: Jvm | null = null;
  const brokers: BrokerSlot[] = [];
  const slaves: BrokerSlot[] = [];
  let proxyJvm: Jvm | null = null;
  const allJvms = (): Array<Jvm | null> => [nsJvm, ...brokers.map((b) => b.jvm), ...slaves.map((b) => b.jvm), proxyJvm];
  const cleanupOnFailure = async (err: unknown): Promise<never> => {
    const t = tailOf(allJvms(), 30);
    await Promise.all(allJvms().map((j) => stopJvm(j, false)));
    rmSync(dir, { recursive: true, force: true });
    untrackDir(dir);
    throw new Error(`${(err as Error).message}\n${t}`);
  };

  let namesrv = '';
  try {
    nsJvm = startJvm(
      home,
      'namesrv',
      nsHome,
      [
        '-server',
        '-Xms64m',
        '-Xmx192m',
        '-XX:MaxDirectMemorySize=128m',
        '-XX:TieredStopAtLevel=1',
        ...logbackFlag(v4, 'namesrv'),
      ],
      ['org.apache.rocketmq.namesrv.NamesrvStartup', '-c', nsConf],
      join(lib, '*'),
    );
    const line = await waitForLine(
      nsJvm,
      /The Name Server boot success\. serializeType=\w+(?:, address ([\d.]+:\d+))?/,
      options.namesrvBootTimeoutMs ?? 30_000,
    );
    namesrv = v4 ? `127.0.0.1:${nsPort}` : line[1]!.replace(/^0\.0\.0\.0:/, '127.0.0.1:');
  } catch (err) {
    return cleanupOnFailure(err);
  }
  const nsBootMs = Date.now() - nsStart;

  const brokerCount = options.brokers ?? 1;
  for (let i = 0; i < brokerCount; i++) {
    const name = `broker-${String.fromCharCode(97 + i)}`;
    const bHome = join(dir, name);
    const master: BrokerSlot = { name, id: 0, port: 0, home: bHome, conf: join(bHome, 'broker.conf'), jvm: null };
    brokers.push(master);
    if (options.slaves) {
      const sHome = join(dir, `${name}-s`);
      slaves.push({ name, id: 1, master, port: 0, home: sHome, conf: join(sHome, 'broker.conf'), jvm: null });
    }
  }
  const bindHost = options.brokerBindHost ?? '127.0.0.1';
  const bootMs: number[] = brokers.map(() => 0);
  const slaveBootMs: number[] = slaves.map(() => 0);
  const heap = options.brokerHeapMb ?? 512;
  const brokerJvmArgs = [
    '-server',
    '-Xms128m',
    `-Xmx${heap}m`,
    '-XX:MaxDirectMemorySize=512m',
    // C1 only: a boot costs about 4.5 instead of 7.5 CPU seconds, which matters on 2 shared cores.
    // Benchmarks that want the full JIT pass brokerJvmArgs: ['-XX:TieredStopAtLevel=4'] (last wins).
    '-XX:TieredStopAtLevel=1',
    ...(options.serializeType === 'ROCKETMQ' ? ['-Drocketmq.serialize.type=ROCKETMQ'] : []),
    ...(options.brokerJvmArgs ?? []),
  ];
  const ctx: ClusterContext = {
    options,
    v4,
    lib,
    home,
    namesrv,
    bindHost,
    brokerJvmArgs,
    brokers,
    slaves,
    controllerAddr,
  };
  const slotOf = (i: number, slave: boolean | undefined): BrokerSlot => brokerAt(slave ? slaves : brokers, i);

  try {
    // Sequential: on two cores, parallel JVM boots take about as long and make failures harder to read.
    // A slave after its master: it needs the master's HA port.
    for (let i = 0; i < brokers.length; i++) {
      bootMs[i] = await bootBroker(ctx, brokers[i]!);
      if (slaves[i]) slaveBootMs[i] = await bootBroker(ctx, slaves[i]!);
    }
  } catch (err) {
    return cleanupOnFailure(err);
  }

  // The proxy (5.x): cluster mode in front of the brokers, which must be up first.
  let proxyAddr = '';
  if (options.proxy) {
    if (v4) return cleanupOnFailure(new Error(`RocketMQ ${version} has no proxy (5.x only)`));
    try {
      proxyAddr = await startProxy(ctx, dir, (jvm) => (proxyJvm = jvm));
    } catch (err) {
      return cleanupOnFailure(err);
    }
  }

  const cluster: RealCluster = {
    version,
    namesrv,
    brokers: brokers.map((b) => `127.0.0.1:${b.port}`),
    slaves: slaves.map((b) => `127.0.0.1:${b.port}`),
    brokerBinds: brokers.map((b) => direct(ctx, b)),
    proxy: proxyAddr,
    brokerNames: brokers.map((b) => b.name),
    clusterName: CLUSTER_NAME,
    dir,
    logs: { namesrv: nsHome, brokers: brokers.map((b) => b.home), slaves: slaves.map((b) => b.home) },
    bootMs: { namesrv: nsBootMs, brokers: bootMs, slaves: slaveBootMs },
    acl: options.acl,
    async stop(o = {}) {
      if (stopped.all) return;
      stopped.all = true;
      const graceful = o.graceful ?? true;
      // Brokers first so that they can unregister, then the name server; a SIGKILL run does all at once.
      if (graceful) {
        await stopJvm(proxyJvm, true);
        await Promise.all([...brokers, ...slaves].map((b) => stopJvm(b.jvm, true)));
        await stopJvm(nsJvm, true);
      } else {
        await Promise.all(allJvms().map((j) => stopJvm(j, false)));
      }
      if (process.env.ROCKETWIRE_KEEP_INTEROP === '1') {
        process.stderr.write(`interop: kept ${dir} (ROCKETWIRE_KEEP_INTEROP=1)\n`);
      } else {
        rmSync(dir, { recursive: true, force: true });
      }
      untrackDir(dir);
      for (const b of [...brokers, ...slaves]) releaseBrokerPorts(b);
    },
    async stopBroker(i, o = {}) {
      await stopJvm(slotOf(i, o.slave).jvm, !o.kill);
    },
    async killBroker(i, o = {}) {
      await stopJvm(slotOf(i, o.slave).jvm, false);
    },
    async startBroker(i, o = {}) {
      const b = slotOf(i, o.slave);
      if (running(b)) throw new Error(`${b.name}${o.slave ? ' (slave)' : ''} is running`);
      const ms = await bootBroker(ctx, b);
      if (o.slave) slaveBootMs[i] = ms;
      else bootMs[i] = ms;
    },
    isRunning(i, o = {}) {
      return running(slotOf(i, o.slave));
    },
    waitForReplica: (i, topic, o) => waitForReplica(ctx, i, topic, o),
    waitForBrokerIds: (topic, i, ids, o) => waitForBrokerIds(ctx, topic, i, ids, o),
    createTopic: (topic, o) => createTopic(ctx, topic, o),
    waitForRoute: (topic, o) => waitForRoute(ctx, topic, o),
    connect(addr, o = {}) {
      return new RawConnection(addr, o.acl === undefined ? (options.acl ?? null) : o.acl);
    },
    invoke(addr, request, o = {}) {
      return rawInvoke(addr, request, {
        timeoutMs: o.timeoutMs ?? 5000,
        acl: o.acl === undefined ? (options.acl ?? null) : o.acl,
      });
    },
    tail(lines = 20) {
      return tailOf(allJvms(), lines);
    },
    controllerAddr,
  };
  return cluster;
}
