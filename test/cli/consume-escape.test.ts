import t from 'tap';
import { produce, uniqueName, withBroker } from '../consumer/helpers.js';
import { runCli } from './run-in-process.js';

t.test("consume's text lines escape control characters in tags, keys and body; --json keeps them", async (t) => {
  const broker = await withBroker();
  t.teardown(() => broker.close());
  const topic = uniqueName('T');
  await produce(broker.namesrv, topic, 1, () => ({ tags: 'a\x1b[2J', keys: ['k\x07'], body: 'b\x9bc\x1b]0;x\x07' }));
  const base = ['consume', '--namesrv', broker.namesrv, '--topic', topic, '--from', 'first', '--limit', '1'];
  const text = await runCli([...base, '--group', uniqueName('cg')]);
  t.equal(text.code, 0, text.stderr);
  t.notMatch(text.stdout, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/, 'no raw control character');
  t.match(text.stdout, ' tags=a\\x1b[2J keys=k\\x07 body="b\\x9bc\\x1b]0;x\\x07"');
  const json = await runCli([...base, '--group', uniqueName('cg'), '--json']);
  t.equal(json.code, 0, json.stderr);
  t.match(JSON.parse(json.stdout), { tags: 'a\x1b[2J', body: 'b\x9bc\x1b]0;x\x07' });
});
