// The stock Java client's AclClientRPCHook (test/interop/java/RefClient.java --ak/--sk) against
// rocketwire's embedded broker with an ACL 1.0 plain_acl.yml: the 5.3.3 and 4.9.7
// producers and the 5.3.3 push consumer are served with the right key; a wrong secret or an
// unknown key is refused (the broker logs why), and nothing is stored.
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { AdminClient } from '../../lib/admin/index.js';
import { V4_VERSION, V5_VERSION } from './harness.js';
import { JavaClientError, javaProduce, startJavaConsumer } from './java-client.js';
import { interopReady } from './skip.js';

t.setTimeout(240_000);

const JAVA = { accessKey: 'javauser1', secretKey: 'java-secret-1' };
const ADMIN = { accessKey: 'rocketadmin', secretKey: 'admin-secret-1' };

if (await interopReady(t, [V5_VERSION, V4_VERSION])) {
  t.test('Java clients with AclClientRPCHook against the embedded broker with acl', async (t) => {
    const warnings: string[] = [];
    const broker = await startBroker({
      queues: 2,
      warn: (l) => warnings.push(l),
      acl: {
        accounts: [
          { ...ADMIN, admin: true },
          // the producers' and consumer's groups: Apache checks only consumer groups
          {
            ...JAVA,
            defaultTopicPerm: 'DENY',
            defaultGroupPerm: 'DENY',
            topicPerms: ['JavaAcl=PUB|SUB'],
            groupPerms: ['java_acl_cg=SUB'],
          },
        ],
      },
    });
    t.teardown(() => broker.close());
    const admin = new AdminClient({ namesrvAddr: broker.namesrv, acl: ADMIN });
    t.teardown(() => admin.close());
    await admin.createOrUpdateTopic({ topic: 'JavaAcl', readQueueNums: 2, writeQueueNums: 2 });
    const stored = (): number =>
      broker.instances[0]!.messageStore.getMaxOffset('JavaAcl', 0) +
      broker.instances[0]!.messageStore.getMaxOffset('JavaAcl', 1);

    const consumer = await startJavaConsumer({
      acl: JAVA,
      namesrv: broker.namesrv,
      topic: 'JavaAcl',
      group: 'java_acl_cg',
      expect: 20,
      from: 'first',
      timeoutMs: 90_000,
    });
    const v5 = await javaProduce({ acl: JAVA, namesrv: broker.namesrv, topic: 'JavaAcl', count: 10 });
    t.equal(v5.sent.length, 10, 'the 5.3.3 producer with the right key sends');
    const v4 = await javaProduce({
      version: V4_VERSION,
      acl: JAVA,
      namesrv: broker.namesrv,
      topic: 'JavaAcl',
      count: 10,
    });
    t.equal(v4.sent.length, 10, 'the 4.9.7 producer with the right key sends');
    const { summary } = await consumer.done;
    t.equal(summary.received, 20, 'the 5.3.3 push consumer with the right key receives all 20');
    t.equal(stored(), 20);

    for (const [what, acl, reason] of [
      [
        'a wrong secret',
        { accessKey: JAVA.accessKey, secretKey: 'not-the-secret' },
        /broker-a refused SEND_MESSAGE(_V2)? \(\d+\) from .*: Check signature failed for accessKey=javauser1 /,
      ],
      [
        'an unknown key',
        { accessKey: 'nobody-here', secretKey: 'java-secret-1' },
        /broker-a refused SEND_MESSAGE(_V2)? \(\d+\) from .*: No acl config for nobody-here /,
      ],
    ] as const) {
      const err = await javaProduce({ acl, namesrv: broker.namesrv, topic: 'JavaAcl', count: 1 }).then(
        () => null,
        (e: unknown) => e,
      );
      t.type(err, JavaClientError, `the Java producer with ${what} fails`);
      // RefClient prints MQClientException's message ("Send [3] times, still failed"), not its cause: the broker's log says why
      t.ok(
        warnings.some((l) => reason.test(l)),
        `the broker refused its sends: ${reason}`,
      );
      t.notOk(
        warnings.some((l) => /javauser1/.test(l) && !/Check signature failed/.test(l)),
        'the right key was never refused',
      );
    }
    t.equal(stored(), 20, 'nothing refused was stored');
  });
}
