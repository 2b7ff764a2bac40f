import t from 'tap';
import { decodeProperties, encodeProperties } from '../../protocol/index.js';

t.test('Java parsing rule of the properties string', async (t) => {
  t.same(decodeProperties(''), {});
  t.same(decodeProperties('A\u0001b'), { A: 'b' });
  t.same(decodeProperties('A\u0001b\u0002'), { A: 'b' }, 'trailing separator');
  t.same(decodeProperties('A\u0001b\u0002\u0002C\u0001d'), { A: 'b', C: 'd' }, 'empty segment skipped');
  t.same(decodeProperties('\u0001b\u0002A\u0001'), {}, 'empty name and empty value dropped');
  t.same(decodeProperties('AB\u0002C\u0001d'), { C: 'd' }, 'segment without separator dropped');
  t.same(decodeProperties('A\u0001b\u0001c'), { A: 'b\u0001c' }, 'value keeps later \\u0001');
  t.same(decodeProperties('A\u0001x\u0002A\u0001y'), { A: 'y' }, 'later duplicate wins');
  t.same(decodeProperties('AB\u0002X\u0001y'), { X: 'y' }, 'a \\u0001 found only in a later segment does not count');
});

t.test('encoding skips null values and follows the trailing-separator option', async (t) => {
  t.equal(encodeProperties({ A: 'b', N: null, C: 'd' }), 'A\u0001b\u0002C\u0001d');
  t.equal(encodeProperties({ A: 'b' }, { trailingSeparator: true }), 'A\u0001b\u0002');
  t.equal(encodeProperties({}), '');
  const props = { TAGS: 'TagA', KEYS: 'k1 k2', UNIQ_KEY: 'ABC' };
  const javaOrder = encodeProperties(
    { WAIT: 'true', TAGS: 'a', KEYS: 'k', UNIQ_KEY: 'u', CLUSTER: 'c' },
    { javaOrder: true },
  );
  t.equal(
    javaOrder,
    'KEYS\u0001k\u0002UNIQ_KEY\u0001u\u0002CLUSTER\u0001c\u0002WAIT\u0001true\u0002TAGS\u0001a',
    'HashMap iteration order',
  );
  t.same(decodeProperties(encodeProperties(props)), props);
});
