import t from 'tap';
import { ProtocolError, decodeDelayOffsetFile, encodeDelayOffsetFile } from '../../protocol/internal.js';

t.test(
  'delayOffset.json: fastjson pretty layout with unquoted level keys, read back; standard JSON read too',
  async (t) => {
    const table = new Map([
      [3, 7],
      [1, 5],
    ]);
    const text = encodeDelayOffsetFile(table);
    t.equal(text, '{\n\t"offsetTable":{1:5,3:7\n\t}\n}');
    t.same(
      [...decodeDelayOffsetFile(text)],
      [
        [1, 5],
        [3, 7],
      ],
    );
    t.equal(encodeDelayOffsetFile(new Map()), '{\n\t"offsetTable":{}\n}');
    t.same([...decodeDelayOffsetFile('{"offsetTable":{"2":9}}')], [[2, 9]]);
    t.throws(() => decodeDelayOffsetFile('{"offsetTable":{"x":1}}'), ProtocolError);
    t.throws(() => decodeDelayOffsetFile('{"offsetTable":{"1":"a"}}'), ProtocolError);
  },
);
