import t from 'tap';
import { decodeCommand, ProtocolError } from '../../protocol/index.js';
import { loadVectors, VECTOR_VERSIONS, type FrameVector } from './vectors-fixtures.js';

// Headers no Java peer writes but a decoder meets (other clients, damaged streams), each decoded by
// Java's RemotingCommand.decode: we read them as Java does, and refuse what Java refuses.

interface DecodeCase {
  name: string;
  description: string;
  hex: string;
  javaError?: string;
  /** As a frame vector's decoded fields; these cases carry no body. */
  decoded?: Omit<FrameVector['decoded'], 'bodyHex'>;
}

// 5.3.3's fastjson gives up (NullPointerException) on malformed UTF-8 inside a JSON header where
// 4.9.8 reads it with replacement characters; we read it like 4.9.8.
const LENIENT = new Set(['json-invalid-utf8']);

// Java coerces a fractional int field (11.5 -> 11) and a boolean (true -> 1); we refuse both: no
// implementation writes them, so they can only come from damage.
const STRICTER = new Set(['json-fraction', 'json-boolean-code']);

// Java's UTF-8 decoder replaces an encoded surrogate (ED A0..BF xx) with one U+FFFD, the WHATWG
// decoder Node uses with three; both replace, only the count differs.
const fffd = (s: string | null | undefined): string | null | undefined => s?.replace(/\ufffd+/g, '\ufffd');

for (const version of VECTOR_VERSIONS) {
  t.test(`${version}: decodeCommand agrees with RemotingCommand.decode`, async (t) => {
    const cases = loadVectors<DecodeCase[]>(version, 'decode-cases.json');
    t.ok(cases.length >= 16);
    for (const c of cases) {
      const frame = Buffer.from(c.hex, 'hex');
      if (c.javaError !== undefined) {
        if (LENIENT.has(c.name)) {
          t.doesNotThrow(() => decodeCommand(frame), `${c.name}: read although ${version} refuses it`);
        } else {
          t.throws(() => decodeCommand(frame), ProtocolError, `${c.name}: refused like Java (${c.javaError})`);
        }
        continue;
      }
      if (STRICTER.has(c.name)) {
        t.throws(() => decodeCommand(frame), ProtocolError, `${c.name}: refused although Java coerces it`);
        continue;
      }
      const j = c.decoded!;
      const d = decodeCommand(frame);
      t.equal(d.code, j.code, `${c.name}: code`);
      t.equal(d.language, j.language ?? null, `${c.name}: language`);
      t.equal(d.version, j.version, `${c.name}: version`);
      t.equal(d.opaque, j.opaque, `${c.name}: opaque`);
      t.equal(d.flag, j.flag, `${c.name}: flag`);
      t.equal(fffd(d.remark), fffd(j.remark ?? null), `${c.name}: remark`);
      t.equal(d.serializeType, j.serializeType, `${c.name}: serializeType`);
      const ext =
        d.extFields && Object.keys(d.extFields).length > 0
          ? Object.fromEntries(Object.entries(d.extFields).map(([k, v]) => [fffd(k), fffd(v)]))
          : null;
      const jext = j.extFields
        ? Object.fromEntries(Object.entries(j.extFields).map(([k, v]) => [fffd(k), fffd(v)]))
        : null;
      t.same(ext, jext, `${c.name}: extFields`);
    }
  });
}
