import t from 'tap';
import { didYouMean, editDistance } from '../../lib/cli/did-you-mean.js';
import { runCli } from './run-in-process.js';

t.test('edit distance counts a swapped pair of letters as one edit', async (t) => {
  t.equal(editDistance('prodcue', 'produce'), 1);
  t.equal(editDistance('cuont', 'count'), 1);
  t.equal(editDistance('kitten', 'sitting'), 3);
  t.equal(editDistance('', 'abc'), 3);
  t.equal(editDistance('same', 'same'), 0);
  t.equal(didYouMean('consme', ['produce', 'consume']), 'consume');
  t.equal(didYouMean('name', ['namesrv', 'namespace']), undefined, 'a prefix of two names is no guess');
  t.equal(didYouMean('names', ['namesrv', 'timeout']), 'namesrv', 'a prefix of one name is');
  t.equal(didYouMean('to', ['topic', 'tag']), undefined, 'two letters are not stretched to five');
  t.equal(didYouMean('zzzzzz', ['produce']), undefined);
});

t.test('an unknown command names the nearest one, in one line, exit 2', async (t) => {
  const r = await runCli(['prodcue', '--topic', 'T']);
  t.equal(r.code, 2);
  t.equal(r.stderr, "rocketwire: unknown command 'prodcue': did you mean 'produce'?\n");
  t.equal(r.stdout, '');
  const far = await runCli(['frobnicate']);
  t.equal(far.code, 2);
  t.equal(far.stderr, "rocketwire: unknown command 'frobnicate' (rocketwire help lists the commands)\n");
});

t.test('an unknown flag names the nearest flag of that command', async (t) => {
  const cases: [string[], string][] = [
    [
      ['produce', '--cuont', '3', '--topic', 'T'],
      'rocketwire produce: unknown option --cuont: did you mean --count?\n',
    ],
    [['consume', '--gruop=g', '--topic', 'T'], 'rocketwire consume: unknown option --gruop: did you mean --group?\n'],
    [['offsets', '--namsrv', 'x:1'], 'rocketwire offsets: unknown option --namsrv: did you mean --namesrv?\n'],
    [['decode', '--stast', 'f.pcap'], 'rocketwire decode: unknown option --stast: did you mean --stats?\n'],
    [['admin', 'topic', 'route', '--topci', 'T'], 'rocketwire admin: unknown option --topci: did you mean --topic?\n'],
    // mqadmin's single-dash habit, which parseArgs would read as -t with the value "opic"
    [['produce', '-topic', 'T'], 'rocketwire produce: unknown option -topic: did you mean --topic?\n'],
    [['produce', '--zzz'], 'rocketwire produce: unknown option --zzz (--help lists the options)\n'],
  ];
  for (const [args, line] of cases) {
    const r = await runCli(args);
    t.equal(r.code, 2, args.join(' '));
    t.equal(r.stderr, line);
  }
});

t.test('admin commands and subcommands get a suggestion too', async (t) => {
  const sub = await runCli(['admin', 'topic', 'lsit']);
  t.equal(sub.code, 2);
  t.equal(sub.stderr, "rocketwire admin: unknown subcommand 'topic lsit': did you mean 'topic list'?\n");
  const group = await runCli(['admin', 'gruop', 'list']);
  t.equal(group.code, 2);
  t.equal(group.stderr, "rocketwire admin: unknown admin command 'gruop': did you mean 'group'?\n");
});
