import t from 'tap';
import { ResponseCode } from '../../protocol/index.js';
import { startBroker } from '../../lib/broker/index.js';
import { client, decode, heartbeatRequest, javaHash, pullRequest, sendRequest } from './helpers.js';

// Tag filtering follows Java: FilterAPI.buildSubscriptionData for a pull that carries its own
// expression (FLAG_SUBSCRIPTION), the heartbeat's SubscriptionData as the client sent it
// otherwise, and ExpressionMessageFilter matching the code set.
t.test(
  'tag filters: FilterAPI semantics for FLAG_SUBSCRIPTION pulls, the heartbeat subscription as sent',
  async (t) => {
    const b = await startBroker();
    t.teardown(() => b.close());
    const c = client();
    t.teardown(() => c.close());
    for (const tag of ['TagA', 'TagB', 'TagC'])
      t.equal((await c.invoke(b.broker, sendRequest('Filtered', tag, { tags: tag }))).code, ResponseCode.SUCCESS);
    const bodies = async (subscription: string): Promise<string[]> =>
      decode(await c.invoke(b.broker, pullRequest('Filtered', { subscription }))).map((m) => m.body.toString());

    t.same(await bodies(' TagA || TagB '), ['TagA', 'TagB'], 'split on ||, parts trimmed');
    t.same(await bodies('*'), ['TagA', 'TagB', 'TagC']);
    t.same(await bodies(''), ['TagA', 'TagB', 'TagC'], 'empty means everything');
    // Java compares with "*" untrimmed: " * " is the tag "*", which none of these messages has
    const spaced = await c.invoke(b.broker, pullRequest('Filtered', { subscription: ' * ' }));
    t.equal(spaced.code, ResponseCode.PULL_RETRY_IMMEDIATELY);
    t.equal(spaced.remark, 'NO_MATCHED_MESSAGE');

    // without FLAG_SUBSCRIPTION the registered subscription's code set decides, as the client built it
    const hb = heartbeatRequest('10.0.0.1@filter', 'fg', [{ topic: 'Filtered', subString: 'TagB' }]);
    const data = JSON.parse(hb.body!.toString()) as {
      consumerDataSet: { subscriptionDataSet: { codeSet: number[]; tagsSet: string[] }[] }[];
    };
    const sd = data.consumerDataSet[0]!.subscriptionDataSet[0]!;
    sd.codeSet = [javaHash('TagB'), javaHash('TagC')];
    sd.tagsSet = ['TagB', 'TagC'];
    hb.body = Buffer.from(JSON.stringify(data));
    t.equal((await c.invoke(b.broker, hb)).code, ResponseCode.SUCCESS);
    const registered = decode(
      await c.invoke(b.broker, pullRequest('Filtered', { group: 'fg', sysFlag: 0, subVersion: 1 })),
    ).map((m) => m.body.toString());
    t.same(registered, ['TagB', 'TagC']);
  },
);
