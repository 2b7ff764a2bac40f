import t from 'tap';
import { decodeResetOffsetBody } from '../../protocol/index.js';
import { formatOffsetsFile, parseOffsetsFile } from '../../lib/consumer/core/offset-store.js';

// The BROADCASTING offsets file is Java's OffsetSerializeWrapper, written by protocol's
// ResetOffsetBody codec (object map keys, fastjson's escapes) and read back by the tolerant reader.
t.test(
  'the local offsets file round-trips through the reader and protocol codec, odd topic names included',
  async (t) => {
    const entries = [
      { mq: { topic: 'T"x\u2028y', brokerName: 'broker-1', queueId: 3 }, offset: 12 },
      { mq: { topic: 'A', brokerName: 'b', queueId: 0 }, offset: 0 },
    ];
    const text = formatOffsetsFile(entries);
    t.match(text, /^\{"offsetTable":\{\{"brokerName":/, 'object keys, as fastjson writes the wrapper');
    t.ok(text.includes('\\u2028'), 'U+2028 escaped as fastjson does');
    const sortByOffset = <E extends { offset: number }>(xs: E[]): E[] => [...xs].sort((a, b) => a.offset - b.offset);
    t.same(sortByOffset(parseOffsetsFile(text)!), sortByOffset(entries));
    t.same(
      sortByOffset(decodeResetOffsetBody(Buffer.from(text)).offsetTable.map(([mq, offset]) => ({ mq, offset }))),
      sortByOffset(entries),
    );
  },
);

t.test(
  'an unreadable offsets file: the .bak is loaded and kept; both unreadable refuse to start and touch nothing',
  async (t) => {
    const { LocalFileOffsetStore } = await import('../../lib/consumer/core/offset-store.js');
    const { OffsetFileError } = await import('../../lib/consumer/errors.js');
    const { mkdirSync, readFileSync, writeFileSync, existsSync } = await import('node:fs');
    const { join } = await import('node:path');
    const mq = { topic: 'T', brokerName: 'broker-a', queueId: 1 };
    const good = formatOffsetsFile([{ mq, offset: 42 }]);

    // main file garbage, .bak good: the .bak's offsets, and the garbage is moved aside so that the
    // next write (which renames the main file to .bak) cannot put it over the only good copy
    const dir1 = t.testdir({});
    const s1 = new LocalFileOffsetStore(dir1, 'ip@1', 'g');
    mkdirSync(join(dir1, 'ip@1', 'g'), { recursive: true });
    writeFileSync(s1.file, '{"offsetTable":{{"brokerName":"broker-a",');
    writeFileSync(`${s1.file}.bak`, good);
    await s1.load();
    t.equal(await s1.readOffset(mq, 'store'), 42, 'offsets from the .bak');
    t.ok(existsSync(`${s1.file}.unreadable`), 'the unreadable file moved aside');
    s1.updateOffset(mq, 50, false);
    await s1.persistAll([mq]);
    t.equal(readFileSync(`${s1.file}.bak`, 'utf8'), good, 'the good .bak was not overwritten by the garbage');
    t.same(parseOffsetsFile(readFileSync(s1.file, 'utf8')), [{ mq, offset: 50 }], 'the new file holds the new offset');

    // both unreadable: a typed error naming the file, and neither file is touched
    const dir2 = t.testdir({});
    const s2 = new LocalFileOffsetStore(dir2, 'ip@1', 'g');
    mkdirSync(join(dir2, 'ip@1', 'g'), { recursive: true });
    writeFileSync(s2.file, 'garbage');
    writeFileSync(`${s2.file}.bak`, '{"offsetTable":');
    const err = await s2.load().then(
      () => null,
      (e: unknown) => e,
    );
    t.type(err, OffsetFileError);
    t.equal((err as InstanceType<typeof OffsetFileError>).file, s2.file);
    t.match((err as Error).message, /offsets\.json does not parse; offsets\.json\.bak does not parse/);
    t.equal(readFileSync(s2.file, 'utf8'), 'garbage', 'the file is left as it was');
    t.equal(readFileSync(`${s2.file}.bak`, 'utf8'), '{"offsetTable":');

    // no file at all: a fresh start
    const s3 = new LocalFileOffsetStore(t.testdir({}), 'ip@1', 'g');
    await s3.load();
    t.equal(await s3.readOffset(mq, 'store'), -1, 'nothing stored yet');
  },
);
