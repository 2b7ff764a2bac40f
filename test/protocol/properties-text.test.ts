// The broker config's properties text (GET_BROKER_CONFIG / UPDATE_BROKER_CONFIG): what Java's
// MixAll.properties2String writes round-trips, and what java.util.Properties#load reads in such
// text (comments, separators, continuations, escapes) reads the same here.
import t from 'tap';
import { decodePropertiesText, encodePropertiesText } from '../../protocol/internal.js';

t.test('sorted key=value lines, read back as written', async (t) => {
  const text = encodePropertiesText({ listenPort: '10911', brokerName: 'broker-a', storePathRootDir: '/x/store' });
  t.equal(text.toString(), 'brokerName=broker-a\nlistenPort=10911\nstorePathRootDir=/x/store\n');
  t.same(decodePropertiesText(text), { brokerName: 'broker-a', listenPort: '10911', storePathRootDir: '/x/store' });
  t.same(decodePropertiesText(Buffer.from('k=a=b\nempty=\n')), { k: 'a=b', empty: '' }, 'only the first = splits');
});

t.test("what Properties#load reads: comments, ':' and blanks, continuations, escapes", async (t) => {
  const text = [
    '# a comment',
    '! another',
    '   spaced   =   v1',
    'colon:v2',
    'blank v3',
    'cont = one, \\',
    '       two',
    'esc = tab\\there\\u0041\\\\',
    'key\\ with\\ space = v4',
    '',
  ].join('\n');
  t.same(decodePropertiesText(Buffer.from(text)), {
    spaced: 'v1',
    colon: 'v2',
    blank: 'v3',
    cont: 'one, two',
    esc: 'tab\there' + 'A\\',
    'key with space': 'v4',
  });
});
