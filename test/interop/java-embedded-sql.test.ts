// The stock Java 5.3.3 client's SQL92 subscription (MessageSelector.bySql, test/interop/java/SqlClient.java)
// against rocketwire's embedded broker: with enablePropertyFilter it gets exactly the matching
// messages the Java producer sent; without it (the default, as Apache's) its start() is refused
// with the broker's answer to CHECK_CLIENT_CONFIG.
import t from 'tap';
import { startBroker } from '../../lib/broker/index.js';
import { V5_VERSION } from './harness.js';
import { javaSqlConsume, javaSqlProduce } from './java-sql.js';
import { interopReady } from './skip.js';

t.setTimeout(120_000);

if (await interopReady(t, [V5_VERSION])) {
  t.test('Java bySql on the embedded broker with enablePropertyFilter: exactly the matches', async (t) => {
    // one queue per auto-created topic, so the orderly Java consumer sees the messages in send order
    const broker = await startBroker({ queues: 1, enablePropertyFilter: true });
    t.teardown(() => broker.close());
    t.equal(await javaSqlProduce({ namesrv: broker.namesrv, topic: 'JavaSqlOnEmbedded', count: 100 }), 100);
    const got = await javaSqlConsume({
      namesrv: broker.namesrv,
      topic: 'JavaSqlOnEmbedded',
      group: 'java_sql_embedded_cg',
      sql: 'a BETWEEN 10 AND 19 OR a = 99',
      sentinel: '99',
    });
    t.same(got.a, [...Array.from({ length: 10 }, (_, i) => String(10 + i)), '99']);
  });

  t.test('Java bySql on the embedded broker without enablePropertyFilter: start() refused', async (t) => {
    const broker = await startBroker({ queues: 1 });
    t.teardown(() => broker.close());
    t.equal(await javaSqlProduce({ namesrv: broker.namesrv, topic: 'JavaSqlOff', count: 1 }), 1);
    const got = await javaSqlConsume({
      namesrv: broker.namesrv,
      topic: 'JavaSqlOff',
      group: 'java_sql_off_cg',
      sql: 'a = 0',
      sentinel: '0',
    });
    t.match(got.refused, { code: 1, error: /The broker does not support consumer to filter message by SQL92/ });
  });
}
