/**
 * The 5.x rocketmq-proxy in front of a real cluster: cluster mode, remoting and gRPC on picked
 * ports, its classes in rmq-<version>/proxy next to the broker's jars.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startJvm, waitForLine, type Jvm } from './jvm.js';
import { pickPort } from './real-broker.js';
import { CLUSTER_NAME, type ClusterContext } from './real-cluster-model.js';

/**
 * Start the proxy of a cluster whose name server runs and resolve with its remoting address once
 * it says it started. `started` gets the JVM at once, so a failed boot can still stop it.
 */
export async function startProxy(ctx: ClusterContext, dir: string, started: (jvm: Jvm) => void): Promise<string> {
  const { options, lib } = ctx;
  const pHome = join(dir, 'proxy');
  mkdirSync(pHome, { recursive: true });
  const [remotingPort, grpcPort] = [await pickPort(), await pickPort()];
  const pConf = join(pHome, 'rmq-proxy.json');
  writeFileSync(
    pConf,
    JSON.stringify({
      rocketMQClusterName: CLUSTER_NAME,
      namesrvAddr: ctx.namesrv,
      remotingListenPort: remotingPort,
      grpcServerPort: grpcPort,
      ...(typeof options.proxy === 'object' ? options.proxy : {}),
    }),
  );
  const proxyJvm = startJvm(
    ctx.home,
    'proxy',
    pHome,
    [
      '-server',
      '-Xms64m',
      '-Xmx256m',
      '-XX:MaxDirectMemorySize=256m',
      '-XX:TieredStopAtLevel=1',
      '-Drmq.logback.configurationFile=rmq.proxy.logback.xml',
    ],
    ['org.apache.rocketmq.proxy.ProxyStartup', '-pc', pConf, '-pm', 'cluster'],
    `${join(lib, '*')}:${join(dirname(lib), 'proxy', '*')}`,
  );
  started(proxyJvm);
  await waitForLine(proxyJvm, /rocketmq-proxy startup successfully/, options.brokerBootTimeoutMs ?? 60_000);
  return `127.0.0.1:${remotingPort}`;
}
