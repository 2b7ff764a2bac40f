import { spawn, type ChildProcess } from 'node:child_process';
import t from 'tap';
import { RemotingClient } from '../../lib/remoting/index.js';
import { createRequest, parseFastjson, RequestCode } from '../../protocol/index.js';
import { produce, uniqueName, until, withBroker } from './helpers.js';

const BIN = new URL('../../../bin/rocketwire.js', import.meta.url).pathname;

t.test(
  'three consumer processes, one leaves and one joins: each queue owned by exactly one member (seen through the broker)',
  async (t) => {
    const broker = await withBroker();
    t.teardown(() => broker.close());
    const topic = uniqueName('T');
    const group = uniqueName('cg');
    await produce(broker.namesrv, topic, 8, () => ({}), { single: true });
    const admin = new RemotingClient();
    t.teardown(() => admin.close());

    const children: ChildProcess[] = [];
    const spawnMember = (): ChildProcess => {
      const child = spawn(
        process.execPath,
        [BIN, 'consume', '--namesrv', broker.namesrv, '--topic', topic, '--group', group, '--json'],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
      children.push(child);
      return child;
    };
    t.teardown(() => {
      for (const c of children) c.kill('SIGKILL');
    });

    /** clientId → queues of the topic it holds, from GET_CONSUMER_LIST_BY_GROUP and GET_CONSUMER_RUNNING_INFO. */
    const ownership = async (): Promise<Map<string, string[]>> => {
      const list = await admin.invoke(
        broker.broker,
        createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { extFields: { consumerGroup: group } }),
        { timeoutMs: 3000 },
      );
      if (list.code !== 0 || !list.body) return new Map();
      const ids = (parseFastjson(list.body.toString('utf8')) as { consumerIdList: string[] }).consumerIdList;
      const out = new Map<string, string[]>();
      for (const clientId of ids) {
        const res = await admin.invoke(
          broker.broker,
          createRequest(RequestCode.GET_CONSUMER_RUNNING_INFO, {
            extFields: { consumerGroup: group, clientId, jstackEnable: 'false' },
          }),
          { timeoutMs: 5000 },
        );
        if (res.code !== 0 || !res.body) return new Map();
        const info = parseFastjson(res.body.toString('utf8')) as { mqTable: Record<string, unknown> };
        out.set(
          clientId,
          Object.keys(info.mqTable).filter((k) => (JSON.parse(k) as { topic: string }).topic === topic),
        );
      }
      return out;
    };
    const partitioned = async (members: number): Promise<boolean> => {
      const own = await ownership();
      if (own.size !== members) return false;
      const all = [...own.values()].flat();
      return all.length === 4 && new Set(all).size === 4 && [...own.values()].every((q) => q.length >= 1);
    };

    const a = spawnMember();
    spawnMember();
    spawnMember();
    await until(() => partitioned(3), '3 processes partition the 4 queues', 20_000);
    a.kill('SIGTERM');
    await until(() => partitioned(2), 'after one process left', 20_000);
    spawnMember();
    await until(() => partitioned(3), 'after one process joined', 20_000);
    t.pass('each queue owned by exactly one member after every change');
  },
);
