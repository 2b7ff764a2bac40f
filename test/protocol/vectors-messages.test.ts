import t, { type Test } from 'tap';
import {
  decodeBatch,
  decodeMessages,
  ProtocolError,
  encodeBatch,
  encodeProperties,
  encodeStoredMessage,
  type MessageExt,
} from '../../protocol/index.js';
import { parseSocketAddress } from '../../protocol/socket-address.js';
import {
  loadVectors,
  VECTOR_VERSIONS,
  type BatchVector,
  type JavaMessageView,
  type MessageVectors,
} from './vectors-fixtures.js';

// Stored-message records read back by Java's own MessageDecoder (client view: MessageClientExt),
// and batch bodies written by MessageDecoder.encodeMessages, in 4.9.8 and 5.3.3.

function hostBytes(javaAddress: string, port: number): { ip: string; port: number } {
  const a = parseSocketAddress(javaAddress.includes(':') ? `[${javaAddress}]:${port}` : `${javaAddress}:${port}`);
  return { ip: Buffer.from(a.ip).toString('hex'), port: a.port };
}

function ourHost(text: string): { ip: string; port: number } {
  const a = parseSocketAddress(text);
  return { ip: Buffer.from(a.ip).toString('hex'), port: a.port };
}

function checkMessage(t: Test, m: MessageExt, j: JavaMessageView, name: string, version: string): void {
  t.equal(m.topic, j.topic, `${name} topic`);
  t.equal(m.queueId, j.queueId, `${name} queueId`);
  t.equal(m.flag, j.flag, `${name} flag`);
  t.equal(String(m.queueOffset), j.queueOffset, `${name} queueOffset`);
  t.equal(String(m.commitLogOffset), j.commitLogOffset, `${name} commitLogOffset`);
  // 5.x clears COMPRESSED (0x1) once the body is inflated; 4.9.8 leaves it set. We follow 5.x.
  const javaSysFlag = version.startsWith('4') ? j.sysFlag & ~1 : j.sysFlag;
  t.equal(m.sysFlag, javaSysFlag, `${name} sysFlag (COMPRESSED cleared after inflating)`);
  t.equal(String(m.bornTimestamp), j.bornTimestamp, `${name} bornTimestamp`);
  t.same(ourHost(m.bornHost), hostBytes(j.bornHostAddress, j.bornHostPort), `${name} bornHost`);
  t.equal(String(m.storeTimestamp), j.storeTimestamp, `${name} storeTimestamp`);
  t.same(ourHost(m.storeHost), hostBytes(j.storeHostAddress, j.storeHostPort), `${name} storeHost`);
  t.equal(m.reconsumeTimes, j.reconsumeTimes, `${name} reconsumeTimes`);
  t.equal(String(m.preparedTransactionOffset), j.preparedTransactionOffset, `${name} preparedTransactionOffset`);
  t.equal(m.bodyCRC, j.bodyCRC, `${name} bodyCRC`);
  t.equal(m.storeSize, j.storeSize, `${name} storeSize`);
  t.same(m.properties, j.properties ?? {}, `${name} properties`);
  t.equal(m.body.toString('hex'), j.bodyHex ?? '', `${name} body`);
  t.equal(m.msgId, j.msgId, `${name} msgId (UNIQ_KEY when present)`);
  t.equal(m.offsetMsgId, j.offsetMsgId, `${name} offsetMsgId`);
  t.equal(m.tags, j.tags, `${name} tags`);
  t.equal(m.properties.KEYS, j.keys, `${name} keys (the KEYS property, Java's getKeys())`);
  t.same(m.keys, j.keys ? j.keys.split(' ').filter((k: string) => k !== '') : [], `${name} keys as an array`);
}

/** The fields of a stored record that Java's decoded view does not give back verbatim. */
function rawParts(rec: Buffer): { sysFlag: number; storedBody: Buffer; properties: string; magic: 1 | 2 } {
  const sysFlag = rec.readInt32BE(36);
  const bh = sysFlag & 0x10 ? 20 : 8;
  const sh = sysFlag & 0x20 ? 20 : 8;
  let p = 68 + bh + sh;
  const bodyLen = rec.readInt32BE(p);
  const storedBody = rec.subarray(p + 4, p + 4 + bodyLen);
  p += 4 + bodyLen;
  const magic = rec.readInt32BE(4) === (0xdaa320ab | 0) ? 2 : 1;
  const tl = magic === 2 ? rec.readInt16BE(p) : rec.readInt8(p);
  p += magic + tl;
  const pl = rec.readInt16BE(p);
  return { sysFlag, storedBody, properties: rec.toString('utf8', p + 2, p + 2 + pl), magic };
}

function javaHostText(addr: string, port: number): string {
  return addr.includes(':') ? `[${addr}]:${port}` : `${addr}:${port}`;
}

for (const version of VECTOR_VERSIONS) {
  const [vectors] = loadVectors<MessageVectors[]>(version, 'messages.json');

  t.test(`${version}: decodeMessages reads each record as Java's MessageDecoder does`, async (t) => {
    t.ok(vectors!.records.length >= 7);
    for (const v of vectors!.records) {
      const msgs = decodeMessages(Buffer.from(v.hex, 'hex'));
      t.equal(msgs.length, 1, `${v.name} is one record`);
      checkMessage(t, msgs[0]!, v.decoded, v.name, version);
    }
  });

  t.test(`${version}: a pull body of several records`, async (t) => {
    const pull = vectors!.pullBody;
    const msgs = decodeMessages(Buffer.from(pull.hex, 'hex'));
    t.equal(msgs.length, pull.decodedList.length);
    for (const [i, m] of msgs.entries()) checkMessage(t, m, pull.decodedList[i]!, `${pull.name}[${i}]`, version);
  });

  t.test(`${version}: encodeStoredMessage writes the same record`, async (t) => {
    for (const v of vectors!.records) {
      const rec = Buffer.from(v.hex, 'hex');
      const j = v.decoded;
      const raw = rawParts(rec);
      const ours = encodeStoredMessage({
        topic: j.topic,
        queueId: j.queueId,
        flag: j.flag,
        queueOffset: Number(j.queueOffset),
        commitLogOffset: Number(j.commitLogOffset),
        sysFlag: raw.sysFlag,
        bornTimestamp: Number(j.bornTimestamp),
        bornHost: javaHostText(j.bornHostAddress, j.bornHostPort),
        storeTimestamp: Number(j.storeTimestamp),
        storeHost: javaHostText(j.storeHostAddress, j.storeHostPort),
        reconsumeTimes: j.reconsumeTimes,
        preparedTransactionOffset: Number(j.preparedTransactionOffset),
        body: raw.storedBody,
        properties: raw.properties,
      });
      t.equal(ours.toString('hex'), v.hex, v.name);
    }
  });

  t.test(`${version}: damaged pull bodies`, async (t) => {
    const cases = vectors!.damaged;
    t.ok(cases.length >= 6);
    for (const c of cases) {
      const body = Buffer.from(c.hex, 'hex');
      const java = c.decodedList ?? [];
      if (c.name === 'v2-record') {
        // 5.x reads the v2 record; 4.9 reads its 2-byte topic length as 1 byte and gets garbage.
        const ours = decodeMessages(body);
        t.equal(ours.length, 2);
        if (version.startsWith('5')) {
          for (const [i, m] of ours.entries()) checkMessage(t, m, java[i]!, `${c.name}[${i}]`, version);
        } else t.not(ours[1]!.topic, java[1]!.topic, '4.9.8 misreads a v2 record; we read it as 5.x does');
        t.equal(ours[1]!.topic.length, 208);
        continue;
      }
      let ours: ReturnType<typeof decodeMessages> | null = null;
      let failure: ProtocolError | null = null;
      try {
        ours = decodeMessages(body);
      } catch (err) {
        t.type(err, ProtocolError, `${c.name}: only a ProtocolError`);
        failure = err as ProtocolError;
      }
      if (ours) {
        t.equal(ours.length, java.length, `${c.name}: decoded as many as Java`);
        for (const [i, m] of ours.entries()) checkMessage(t, m, java[i]!, `${c.name}[${i}]`, version);
      } else {
        // Java keeps what it decoded before the damage (4.9.8 even reads records with a wrong
        // magic or TOTALSIZE); we refuse the body, and the good records alone decode like Java's.
        t.ok(java.length >= c.goodRecords, `${c.name}: Java kept at least the good records`);
        const prefix = java.slice(0, c.goodRecords).reduce((n, m) => n + m.storeSize, 0);
        t.ok(
          failure!.offset >= prefix && failure!.offset < body.length,
          `${c.name}: error offset ${failure!.offset} inside the damaged record`,
        );
        const good = decodeMessages(body.subarray(0, prefix));
        t.equal(good.length, c.goodRecords, `${c.name}: good records`);
        for (const [i, m] of good.entries()) checkMessage(t, m, java[i]!, `${c.name}[${i}]`, version);
      }
    }
  });

  const batches = loadVectors<BatchVector[]>(version, 'batches.json');

  t.test(`${version}: batch bodies match MessageDecoder.encodeMessages`, async (t) => {
    t.ok(batches.length >= 1);
    for (const v of batches) {
      const trailing = version.startsWith('5');
      for (const m of v.messages) {
        t.equal(
          encodeProperties(Object.fromEntries(m.properties), { trailingSeparator: trailing }),
          m.propertiesString,
          `${v.name}: properties string (${trailing ? 'with' : 'without'} trailing \\u0002)`,
        );
      }
      const ours = encodeBatch(
        v.messages.map((m) => ({
          body: Buffer.from(m.bodyHex, 'hex'),
          flag: m.flag,
          properties: encodeProperties(Object.fromEntries(m.properties), { trailingSeparator: trailing }),
        })),
      );
      // Java's record is 22 + body + properties bytes (4 size, 4 magic, 4 crc, 4 flag, 4 body
      // length, 2 properties length); docs/protocol-facts.md#batch-body.
      t.equal(ours.toString('hex'), v.hex, `${v.name}: encodeBatch`);
      const back = decodeBatch(Buffer.from(v.hex, 'hex'));
      t.equal(back.length, v.decoded.length);
      back.forEach((m, i) => {
        const j = v.decoded[i]!;
        t.equal(m.flag, j.flag, `${v.name}[${i}] flag`);
        t.equal(m.body.toString('hex'), j.bodyHex, `${v.name}[${i}] body`);
        t.same(m.properties, j.properties, `${v.name}[${i}] properties`);
      });
    }
  });
}
