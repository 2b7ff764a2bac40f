import t from 'tap';
import { OptionError } from '../../protocol/errors.js';
import { aliasOption, optionValidator } from '../../lib/validate.js';

class TestOptionError extends OptionError {
  override readonly name = 'TestOptionError';
  constructor(option: string, message: string) {
    super(option, `option ${option}: ${message}`);
  }
}

t.test("errors are the caller's class (or factory) with the option named", (t) => {
  const check = optionValidator(TestOptionError);
  t.throws(() => check.intIn('n', 11, 1, 10), {
    name: 'TestOptionError',
    option: 'n',
    message: 'option n: must be an integer in [1, 10], got 11',
  });
  t.type(check.error('x', 'bad'), TestOptionError);
  const factory = optionValidator((option, message) => new OptionError(option, `${option} ${message}`));
  t.throws(() => factory.intIn('n', 1.5, 1, 10), {
    name: 'OptionError',
    message: 'n must be an integer in [1, 10], got 1.5',
  });
  t.end();
});

t.test('intIn: integers in range pass and come back; the wording is the caller’s', (t) => {
  const brackets = optionValidator(TestOptionError);
  t.equal(brackets.intIn('n', 1, 1, 10), 1);
  t.equal(brackets.intIn('n', 10, 1, 10), 10);
  for (const bad of [0, 11, 2.5, Number.NaN, '5', undefined, null, Number.POSITIVE_INFINITY])
    t.throws(() => brackets.intIn('n', bad, 1, 10), TestOptionError, String(bad));
  const between = optionValidator(TestOptionError, { range: 'between' });
  t.throws(() => between.intIn('n', 0, 1, 10), { message: 'option n: must be an integer between 1 and 10, got 0' });
  const separate = optionValidator(TestOptionError, { range: 'separate' });
  t.throws(() => separate.intIn('n', 'x', 1, 10), { message: 'option n: must be an integer, got x' });
  t.throws(() => separate.intIn('n', 11, 1, 10), { message: 'option n: must be between 1 and 10, got 11' });
  t.equal(separate.intIn('n', 10, 1, 10), 10);
  const dots = optionValidator(TestOptionError, { range: 'dots' });
  t.throws(() => dots.intIn('n', 'x', 1, 10), { message: 'option n: must be an integer in 1..10, got x' });
  t.end();
});

t.test('intAtLeast, safeIntAtLeast and numberAtLeast', (t) => {
  const check = optionValidator(TestOptionError);
  t.equal(check.intAtLeast('n', 2 ** 60, 1), 2 ** 60, 'an integer beyond 2^53 is still an integer');
  t.throws(() => check.intAtLeast('n', 0, 1), { message: 'option n: must be an integer >= 1, got 0' });
  const sign = optionValidator(TestOptionError, { atLeast: '≥' });
  t.throws(() => sign.safeIntAtLeast('n', 2 ** 60, 1), { message: `option n: must be an integer ≥ 1, got ${2 ** 60}` });
  t.throws(() => sign.safeIntAtLeast('max', 5, 10, 'min (10)'), {
    message: 'option max: must be an integer ≥ min (10), got 5',
  });
  const nonNegative = optionValidator(TestOptionError, { atLeast: 'non-negative' });
  t.throws(() => nonNegative.intAtLeast('timeoutMs', -1, 0), {
    message: 'option timeoutMs: must be a non-negative integer, got -1',
  });
  t.throws(() => nonNegative.intAtLeast('n', 0, 1), { message: 'option n: must be an integer >= 1, got 0' });
  t.equal(check.numberAtLeast('ms', 0.5, 0), 0.5);
  t.throws(() => check.numberAtLeast('ms', -1, 0), { message: 'option ms: must be a number >= 0, got -1' });
  t.throws(() => check.numberAtLeast('ms', Number.POSITIVE_INFINITY, 0), TestOptionError, 'not finite');
  t.end();
});

t.test('oneOf, boolean, nonEmptyString', (t) => {
  const check = optionValidator(TestOptionError);
  t.equal(check.oneOf('s', 'JSON', ['JSON', 'ROCKETMQ']), 'JSON');
  t.throws(() => check.oneOf('s', 'XML', ['JSON', 'ROCKETMQ']), {
    message: 'option s: must be JSON or ROCKETMQ, got XML',
  });
  t.throws(() => check.oneOf('s', 'd', ['a', 'b', 'c']), { message: 'option s: must be a, b or c, got d' });
  t.equal(check.boolean('b', false), false);
  t.throws(() => check.boolean('b', 'yes'), { message: 'option b: must be a boolean, got yes' });
  const json = optionValidator(TestOptionError, { boolean: 'true or false', shown: 'json' });
  t.throws(() => json.boolean('b', 'yes'), { message: 'option b: must be true or false, got "yes"' });
  t.equal(check.nonEmptyString('s', 'x'), 'x');
  t.throws(() => check.nonEmptyString('s', ''), { message: 'option s: must be a non-empty string, got ' });
  t.end();
});

t.test('groupName: one rule (Validators.checkGroup), the caller’s messages, in order', (t) => {
  const check = optionValidator(TestOptionError);
  const wording = {
    missing: 'is required',
    blank: 'is blank',
    tooLong: 'is too long',
    illegal: (g: string) => `"${g}" is illegal`,
    reserved: { name: 'DEFAULT_X', message: 'is reserved' },
  };
  t.equal(check.groupName('group', 'g_1-%|A', wording), 'g_1-%|A');
  t.throws(() => check.groupName('group', undefined, wording), { message: 'option group: is required' });
  t.throws(() => check.groupName('group', 7, wording), { message: 'option group: is required' });
  t.throws(() => check.groupName('group', '  ', wording), { message: 'option group: is blank' });
  t.throws(() => check.groupName('group', '  ', { ...wording, blank: undefined }), {
    message: 'option group: "  " is illegal',
  });
  t.throws(() => check.groupName('group', 'x'.repeat(121), wording), { message: 'option group: is too long' });
  t.equal(check.groupName('group', 'x'.repeat(120), wording).length, 120);
  t.throws(() => check.groupName('group', 'x/../y', wording), { message: 'option group: "x/../y" is illegal' });
  t.throws(() => check.groupName('group', 'DEFAULT_X', wording), { message: 'option group: is reserved' });
  t.end();
});

t.test("topicName: TopicValidator's rule and remark", (t) => {
  const check = optionValidator(TestOptionError);
  t.equal(check.topicName('topic', 'T'), 'T');
  t.throws(() => check.topicName('topic', ''), { message: 'option topic: The specified topic is blank.' });
  t.throws(() => check.topicName('topic', 'a b'), { message: /contains illegal characters/ });
  t.end();
});

t.test('aliasOption: either name; both and different is an error naming the alias', (t) => {
  const error = (o: string, m: string) => new TestOptionError(o, m);
  const differ = (v: unknown, a: unknown) => `differs (${String(a)} vs ${String(v)})`;
  t.equal(aliasOption({ group: 'a' }, 'group', 'consumerGroup', error, differ), 'a');
  t.equal(aliasOption({ consumerGroup: 'b' }, 'group', 'consumerGroup', error, differ), 'b');
  t.equal(aliasOption({ group: 'a', consumerGroup: 'a' }, 'group', 'consumerGroup', error, differ), 'a');
  t.equal(aliasOption({}, 'group', 'consumerGroup', error, differ), undefined);
  t.throws(() => aliasOption({ group: 'a', consumerGroup: 'b' }, 'group', 'consumerGroup', error, differ), {
    option: 'consumerGroup',
    message: 'option consumerGroup: differs (b vs a)',
  });
  t.end();
});
