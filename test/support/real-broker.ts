/**
 * The broker JVMs of a real cluster: loopback ports picked at run time, the broker.conf (and the
 * 4.9 logback and ACL files) the harness writes, and one broker's boot up to its registration.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { createRequest, RequestCode } from '../../protocol/index.js';
import { logbackFlag, readText, startJvm, waitForLine } from './jvm.js';
import { rawInvoke, type AclCredentials } from './raw-remoting.js';
import { CLUSTER_NAME, direct, type BrokerSlot, type ClusterContext } from './real-cluster-model.js';
import { listed } from './real-routes.js';

// ---- ports ---------------------------------------------------------------------------------

const reservedPorts = new Set<number>();

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    // 0.0.0.0 collides with a listener on any local address, the broker's HA port binds all of them.
    s.listen({ port, host: '0.0.0.0', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/**
 * A broker listen port p with p-2 (fast channel), p and p+1 (HA) free. Picked below the Linux
 * ephemeral range (32768+) so outgoing connections do not take them in the meantime.
 */
export async function pickBrokerPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const p = 20_000 + 4 * Math.floor(Math.random() * 3000) + 2;
    const block = [p - 2, p - 1, p, p + 1];
    if (block.some((x) => reservedPorts.has(x))) continue;
    let ok = true;
    for (const x of block) if (!(await portFree(x))) ok = false;
    if (!ok) continue;
    for (const x of block) reservedPorts.add(x);
    return p;
  }
  throw new Error('no free block of 4 ports found for a broker');
}

export async function pickPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const p = 20_000 + Math.floor(Math.random() * 12_000);
    if (reservedPorts.has(p) || !(await portFree(p))) continue;
    reservedPorts.add(p);
    return p;
  }
  throw new Error('no free port found');
}

/** Give back the four ports of a broker slot (when its cluster stops). */
export function releaseBrokerPorts(b: BrokerSlot): void {
  for (const p of [b.port - 2, b.port - 1, b.port, b.port + 1]) reservedPorts.delete(p);
}

/** broker.conf of slot `b`: the harness's keys, then the ACL ones, then the test's `brokerConfig`. */
function writeBrokerConf(ctx: ClusterContext, b: BrokerSlot): void {
  const { options, v4 } = ctx;
  mkdirSync(b.home, { recursive: true });
  const store = join(b.home, 'store');
  const conf: Record<string, string | number | boolean> = {
    brokerClusterName: CLUSTER_NAME,
    brokerName: b.name,
    brokerId: b.id,
    brokerRole: b.master ? 'SLAVE' : 'ASYNC_MASTER',
    // 4.9: naming the master's HA address saves the round through the name server. 5.3.3 must
    // not have it: BrokerController.initialize hands it to the HA service before
    // DefaultMessageStore.start() has created the HA client, which drops it ("HAClient connect to
    // master null failed" forever), and a configured address turns off taking it from the
    // name server's registration result.
    ...(b.master && v4 ? { haMasterAddress: `127.0.0.1:${b.master.port + 1}` } : {}),
    ...(options.slaves ? { slaveReadEnable: true } : {}),
    flushDiskType: 'ASYNC_FLUSH',
    namesrvAddr: ctx.namesrv,
    brokerIP1: '127.0.0.1',
    brokerIP2: '127.0.0.1',
    bindAddress: ctx.bindHost,
    listenPort: b.port,
    haListenPort: b.port + 1,
    storePathRootDir: store,
    storePathCommitLog: join(store, 'commitlog'),
    mappedFileSizeCommitLog: 128 * 1024 * 1024,
    mappedFileSizeConsumeQueue: 600_000,
    maxIndexNum: 200_000,
    maxHashSlotNum: 50_000,
    autoCreateTopicEnable: true,
    defaultTopicQueueNums: 8,
    autoCreateSubscriptionGroup: true,
    enablePropertyFilter: true,
    longPollingEnable: true,
    useEpollNativeSelector: false,
    transientStorePoolEnable: false,
    timerWheelEnable: false,
    waitTimeMillsInSendQueue: 1000,
    ...aclBrokerConfig(v4, options.acl),
    ...(ctx.controllerAddr
      ? {
          enableControllerMode: true,
          controllerAddr: ctx.controllerAddr,
          allAckInSyncStateSet: true,
          brokerId: -1,
          brokerRole: 'SLAVE',
        }
      : {}),
    ...(options.brokerConfig ?? {}),
  };
  writeFileSync(
    b.conf,
    Object.entries(conf)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
  );
}

/**
 * Start slot `b`'s JVM (on other ports when the picked ones were taken meanwhile) and resolve,
 * with the boot's wall time, once the name server lists it.
 */
export async function bootBroker(ctx: ClusterContext, b: BrokerSlot): Promise<number> {
  const { options, v4 } = ctx;
  const start = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (b.port === 0) b.port = await pickBrokerPort();
    writeBrokerConf(ctx, b);
    b.jvm = startJvm(
      ctx.home,
      b.master ? `${b.name}-slave` : b.name,
      b.home,
      [...ctx.brokerJvmArgs, ...logbackFlag(v4, 'broker')],
      ['org.apache.rocketmq.broker.BrokerStartup', '-c', b.conf],
      join(ctx.lib, '*'),
    );
    try {
      await waitForLine(b.jvm, /The broker\[[^\]]*\] boot success/, options.brokerBootTimeoutMs ?? 60_000);
      break;
    } catch (err) {
      // A port taken between the check and the bind makes the JVM exit: try other ports.
      if (attempt < 2 && b.jvm.child.exitCode !== null && /Address already in use|bind/i.test(readText(b.jvm.out))) {
        b.port = 0;
        continue;
      }
      throw err;
    }
  }
  // The broker prints "boot success" even when it has not registered; the route is the proof.
  // 5.3.3 registers at start only with the name servers its remoting client has already found
  // reachable, and that scan runs on another thread: about every other boot it has not finished,
  // nothing is registered, and the periodic registration comes 10 s later. Changing
  // brokerPermission (to its current value, read+write) makes the broker register everything at once.
  if (!v4) {
    const registered = await listed(ctx, b, 1000).then(
      () => true,
      () => false,
    );
    if (!registered) {
      await rawInvoke(
        direct(ctx, b),
        createRequest(RequestCode.UPDATE_BROKER_CONFIG, { body: Buffer.from('brokerPermission=6\n') }),
        {
          acl: options.acl ?? null,
          timeoutMs: 10_000,
        },
      ).catch(() => undefined); // the periodic registration still comes
    }
  }
  await listed(ctx, b, options.brokerBootTimeoutMs ?? 60_000);
  return Date.now() - start;
}

/** 4.9 loads $ROCKETMQ_HOME/conf/logback_<role>.xml and exits when it is missing. */
export function writeV4Logback(home: string): void {
  for (const role of ['namesrv', 'broker', 'tools']) {
    writeFileSync(
      join(home, 'conf', `logback_${role}.xml`),
      `<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>\${user.home}/logs/${role}.log</file>
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5p [%t] %c{0} - %m%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
`,
    );
  }
}

/** 4.9 plain ACL: one admin account, no white-listed address (so loopback must sign too). */
export function writePlainAcl(home: string, acl: AclCredentials): void {
  writeFileSync(
    join(home, 'conf', 'plain_acl.yml'),
    `globalWhiteRemoteAddresses: []\naccounts:\n  - accessKey: ${acl.accessKey}\n    secretKey: ${acl.secretKey}\n    whiteRemoteAddress:\n    admin: true\n`,
  );
}

/**
 * 5.3.x replaced plain ACL with auth 2.0: users live in a RocksDB under <store>/config, the initial
 * user is created at boot as a SUPER user (allowed everything), and requests are signed as before.
 */
function aclBrokerConfig(v4: boolean, acl: AclCredentials | undefined): Record<string, string | boolean> {
  if (!acl) return {};
  if (v4) return { aclEnable: true };
  return {
    authenticationEnabled: true,
    authenticationProvider: 'org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider',
    authenticationMetadataProvider:
      'org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider',
    authorizationEnabled: true,
    authorizationProvider: 'org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider',
    authorizationMetadataProvider: 'org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider',
    initAuthenticationUser: JSON.stringify({ username: acl.accessKey, password: acl.secretKey }),
    innerClientAuthenticationCredentials: JSON.stringify({ accessKey: acl.accessKey, secretKey: acl.secretKey }),
  };
}
