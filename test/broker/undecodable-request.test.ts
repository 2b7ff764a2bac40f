import t from 'tap';
import { RequestCode, ResponseCode, createRequest, type RemotingCommand } from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { client, pullRequest, sendRequest } from './helpers.js';

// What a Java broker answers a request whose header it cannot decode: SYSTEM_ERROR with
// UtilAll.exceptionSimpleDesc(e) as the remark, i.e. "<exception class>: <message>", where
// RemotingCommand.decodeCommandCustomHeader's message is "the custom field <name> is null".
const RCE = 'org.apache.rocketmq.remoting.exception.RemotingCommandException: ';

function without(req: RemotingCommand, key: string): RemotingCommand {
  const { [key]: _gone, ...rest } = req.extFields ?? {};
  req.extFields = rest;
  return req;
}

t.test(
  'a missing or malformed header field gets SYSTEM_ERROR naming the field; the connection and broker live on',
  async (t) => {
    const b = await startBroker();
    t.teardown(() => b.close());
    const c = client();
    t.teardown(() => c.close());
    const sent = await c.invoke(b.broker, sendRequest('Undecodable', 'm0'));
    t.equal(sent.code, ResponseCode.SUCCESS);
    const server = b.instances[0]!.server;
    const conns = server.connections.size;

    const noOffset = await c.invoke(b.broker, without(pullRequest('Undecodable'), 'queueOffset'));
    t.equal(noOffset.code, ResponseCode.SYSTEM_ERROR);
    t.equal(noOffset.remark, `${RCE}the custom field <queueOffset> is null`);

    const abc = await c.invoke(
      b.broker,
      createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
        extFields: { consumerGroup: 'g', topic: 'Undecodable', queueId: '0', commitOffset: 'abc' },
      }),
    );
    t.equal(abc.code, ResponseCode.SYSTEM_ERROR);
    t.equal(abc.remark, `${RCE}the custom field <commitOffset> is invalid: not a long: "abc"`);

    // an Integer field beyond Java's int range cannot be parsed by Integer.parseInt either
    const wide = await c.invoke(b.broker, pullRequest('Undecodable', { queueId: 2 ** 32 }));
    t.equal(wide.code, ResponseCode.SYSTEM_ERROR);
    t.match(wide.remark, /the custom field <queueId> is invalid: out of int range/);

    // V2 sends name the one-letter key that is missing; the answer still carries MSG_REGION / TRACE_ON
    const noTopic = await c.invoke(b.broker, without(sendRequest('Undecodable', 'x'), 'b'));
    t.equal(noTopic.code, ResponseCode.SYSTEM_ERROR);
    t.equal(noTopic.remark, `${RCE}the custom field <b> is null`);
    t.equal(noTopic.extFields?.MSG_REGION, 'DefaultRegion');

    // a body that does not decode: the path of the bad field is named (not answered SUCCESS with
    // `"topic":undefined` in the lock body, which no JSON reader accepts)
    const lock = await c.invoke(
      b.broker,
      createRequest(RequestCode.LOCK_BATCH_MQ, {
        body: Buffer.from(
          JSON.stringify({ clientId: 'c1', consumerGroup: 'og', mqSet: [{ brokerName: 'broker-a', queueId: 0 }] }),
        ),
      }),
    );
    t.equal(lock.code, ResponseCode.SYSTEM_ERROR);
    t.match(
      lock.remark,
      /^org\.apache\.rocketmq\.remoting\.exception\.RemotingCommandException: JSON body: mqSet\[0\]\.topic is not a string$/,
    );
    const heartbeat = await c.invoke(
      b.broker,
      createRequest(RequestCode.HEART_BEAT, { body: Buffer.from('{"consumerDataSet":[') }),
    );
    t.equal(heartbeat.code, ResponseCode.SYSTEM_ERROR);
    t.match(heartbeat.remark, /^org\.apache\.rocketmq\.remoting\.exception\.RemotingCommandException: /);

    // the name server answers the same way
    const noRouteTopic = await c.invoke(
      b.namesrv,
      createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { extFields: {} }),
    );
    t.equal(noRouteTopic.code, ResponseCode.SYSTEM_ERROR);
    t.equal(noRouteTopic.remark, `${RCE}the custom field <topic> is null`);

    // oneway: nothing is answered, and the next request on the same connection is served
    await c.invokeOneway(
      b.broker,
      createRequest(RequestCode.UPDATE_CONSUMER_OFFSET, {
        oneway: true,
        extFields: { consumerGroup: 'g', topic: 'Undecodable' },
      }),
    );
    const pulled = await c.invoke(b.broker, pullRequest('Undecodable'));
    t.equal(pulled.code, ResponseCode.SUCCESS, 'the same connection still serves');
    t.equal(server.connections.size, conns, 'no connection was dropped or added');
    t.equal(
      (await c.invoke(b.broker, sendRequest('Undecodable', 'm1'))).code,
      ResponseCode.SUCCESS,
      'the broker still stores',
    );
  },
);

t.test(
  'a pull whose own subscription does not parse gets SUBSCRIPTION_PARSE_FAILED, as Java answers a FilterAPI.build failure',
  async (t) => {
    const b = await startBroker();
    t.teardown(() => b.close());
    const c = client();
    t.teardown(() => c.close());
    t.equal((await c.invoke(b.broker, sendRequest('BadFilter', 'm0'))).code, ResponseCode.SUCCESS);
    // FLAG_SUBSCRIPTION (4): the expression travels in the pull, as lite pull consumers send it
    for (const subscription of ['||', '||||']) {
      const res = await c.invoke(b.broker, pullRequest('BadFilter', { sysFlag: 4, subscription }));
      t.equal(res.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED, JSON.stringify(subscription));
      t.equal(res.remark, "parse the consumer's subscription failed");
    }
    const good = await c.invoke(b.broker, pullRequest('BadFilter', { sysFlag: 4, subscription: '*' }));
    t.equal(good.code, ResponseCode.SUCCESS, 'the connection and broker live on');
  },
);
