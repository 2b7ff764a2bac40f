import t from 'tap';
import {
  buildSubscriptionData,
  FilterExpressionError,
  javaStringHash,
  RocketwireError,
} from '../../protocol/internal.js';

// FilterAPI.build / buildSubscriptionData (remoting/.../protocol/filter/FilterAPI.java).

t.test('everything: null, "" and exactly "*"', async (t) => {
  for (const s of [null, undefined, '', '*']) {
    t.same(
      buildSubscriptionData('T', s, 5),
      {
        classFilterMode: false,
        topic: 'T',
        subString: '*',
        tagsSet: [],
        codeSet: [],
        subVersion: 5,
        expressionType: 'TAG',
      },
      JSON.stringify(s),
    );
  }
});

t.test('tags: split on ||, trimmed, empties dropped, subString as written', async (t) => {
  const s = buildSubscriptionData('T', ' TagA || TagB ||  || TagA', 7);
  t.equal(s.subString, ' TagA || TagB ||  || TagA');
  t.same(s.tagsSet, ['TagA', 'TagB']);
  t.same(s.codeSet, [javaStringHash('TagA'), javaStringHash('TagB')]);
  t.same(buildSubscriptionData('T', 'A|||B', 1).tagsSet, ['A', '|B'], 'String.split on the first "||"');
});

t.test('" * " is the tag "*", not everything; a blank expression has no tags', async (t) => {
  const star = buildSubscriptionData('T', ' * ', 1);
  t.equal(star.subString, ' * ');
  t.same(star.tagsSet, ['*']);
  t.same(star.codeSet, [42]);
  const blank = buildSubscriptionData('T', '   ', 1);
  t.equal(blank.subString, '   ');
  t.same(blank.tagsSet, []);
  t.same(blank.codeSet, []);
});

t.test('codeSet is a set of hashes: colliding tags leave one code', async (t) => {
  t.equal(javaStringHash('Aa'), javaStringHash('BB'));
  const s = buildSubscriptionData('T', 'Aa||BB', 1);
  t.same(s.tagsSet, ['Aa', 'BB']);
  t.same(s.codeSet, [2112]);
});

t.test('Java refuses an expression made only of "||" and an empty SQL92 expression', async (t) => {
  for (const s of ['||', '||||']) {
    t.throws(() => buildSubscriptionData('T', s, 1), FilterExpressionError, s);
  }
  t.throws(() => buildSubscriptionData('T', '', 1, 'SQL92'), {
    name: 'FilterExpressionError',
    errorCode: 'ERR_FILTER_EXPRESSION',
    retriable: false,
    message: 'the SQL92 expression of topic T is empty',
  });
  t.type(new FilterExpressionError('x'), RocketwireError);
  t.same(buildSubscriptionData('T', ' || ', 1).tagsSet, [], '" || " splits into blanks, which are dropped');
});

t.test('expression types: blank means TAG; others keep the expression as written', async (t) => {
  t.equal(buildSubscriptionData('T', 'A', 1, '').expressionType, 'TAG');
  t.same(buildSubscriptionData('T', 'A', 1, null).tagsSet, ['A']);
  const sql = buildSubscriptionData('T', ' a > 1 ', 1, 'SQL92');
  t.match(sql, { subString: ' a > 1 ', tagsSet: [], codeSet: [], expressionType: 'SQL92' });
});
