/**
 * A file of raw frames: one PULL_MESSAGE request and its FOUND answer per message shape of
 * test/fixtures/message-shapes/expected.json. `node dist/test/capture/decode-golden-frames.js
 * --write` wrote test/fixtures/message-shapes/decode.json.txt and decode.table.txt once;
 * decode-golden.test.ts holds `rocketwire decode` to those bytes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequest, createResponse, encodeCommand, RequestCode, ResponseCode } from '../../protocol/internal.js';
import { decodeCli } from './decode-cli.js';

export const fixtureDir = new URL('../../../test/fixtures/message-shapes/', import.meta.url);

export function goldenFrames(): Buffer {
  const shapes = JSON.parse(readFileSync(new URL('expected.json', fixtureDir), 'utf8')) as Record<
    string,
    { hex: string }
  >;
  const frames: Buffer[] = [];
  let opaque = 100;
  for (const [name, { hex }] of Object.entries(shapes)) {
    if (name.endsWith('as the push consumer hands it over')) continue;
    const req = createRequest(RequestCode.PULL_MESSAGE, {
      opaque: opaque++,
      extFields: {
        consumerGroup: 'cg',
        topic: 'Orders',
        queueId: '3',
        queueOffset: '41',
        maxMsgNums: '32',
        sysFlag: '2',
      },
    });
    const rsp = createResponse(req, ResponseCode.SUCCESS, {
      remark: 'FOUND',
      extFields: { nextBeginOffset: '60', minOffset: '0', maxOffset: '60', suggestWhichBrokerId: '0' },
      body: Buffer.from(hex, 'hex'),
    });
    frames.push(encodeCommand(req), encodeCommand(rsp));
  }
  return Buffer.concat(frames);
}

if (process.argv.includes('--write')) {
  const file = new URL('frames.bin', fixtureDir);
  writeFileSync(file, goldenFrames());
  const json = await decodeCli([file.pathname, '--json']);
  const table = await decodeCli([file.pathname]);
  if (json.code !== 0 || table.code !== 0) throw new Error(json.stderr + table.stderr);
  writeFileSync(new URL('decode.json.txt', fixtureDir), json.stdout);
  writeFileSync(new URL('decode.table.txt', fixtureDir), table.stdout);
}
