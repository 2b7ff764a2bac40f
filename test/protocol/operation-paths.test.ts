// Every request lib/ sends and every answer it serves goes through a row of the operation table
// (protocol/operations.ts): the client's `call` and `serve` (lib/client/operation-call.ts), the
// broker's `serve` and `callClient` (lib/broker/processor/request-processor.ts), both built on
// protocol/operation-codec.ts. This test reads lib/'s sources and fails on a line that goes
// around them: an `extFields` object built or written by hand, a frame built with createRequest /
// createResponse, a request sent on a connection directly, an `extFields` key read by hand. The
// places that must do so are listed below with their reason.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../api/api-report.js';

interface Rule {
  readonly name: string;
  readonly re: RegExp;
  readonly what: string;
}

const RULES: readonly Rule[] = [
  { name: 'extFields-literal', re: /\bextFields\s*:\s*\{/, what: 'an extFields object literal' },
  {
    name: 'extFields-write',
    re: /\.extFields\s*(\?\?)?=(?!=)|\.extFields\??(\.\w+|\[[^\]]+\])\s*=(?!=)/,
    what: 'extFields written by hand',
  },
  { name: 'raw-frame', re: /\bcreate(Request|Response)\(/, what: 'a frame built without the table' },
  {
    name: 'raw-send',
    re: /\b(remoting|conn|connection|channel)\.(invoke|invokeOneway)\(/,
    what: 'a request sent on the transport directly',
  },
  { name: 'extFields-read', re: /\.extFields\??\.[A-Za-z_]\w*/, what: 'an extFields key read by hand' },
];

interface Exception {
  /** Path from the repository root. */
  readonly file: string;
  readonly rules: readonly string[];
  readonly reason: string;
}

/** The places that go around the table on purpose. */
const EXCEPTIONS: readonly Exception[] = [
  {
    file: 'lib/remoting/client.ts',
    rules: ['raw-send'],
    reason:
      "the public RemotingClient raw-request API (invoke / invokeOneway of any RemotingCommand): what the table's call path is built on, and what users call for a request code rocketwire has no row for",
  },
  {
    file: 'lib/remoting/request-dispatch.ts',
    rules: ['raw-frame'],
    reason:
      'the transport answers a request before any row is looked up, for every code: REQUEST_CODE_NOT_SUPPORTED, a processor that threw (SYSTEM_ERROR), overload (SYSTEM_BUSY)',
  },
  {
    file: 'lib/remoting/acl.ts',
    rules: ['extFields-write'],
    reason:
      "ACL signing (Java's AclClientRPCHook): AccessKey and Signature are written to a copy of any request's fields",
  },
  {
    file: 'lib/broker/acl/permission-checker.ts',
    rules: ['raw-frame'],
    reason:
      "the ACL check runs on every request code before its processor (Java's PlainAccessValidator), so its refusal is built for a request that may have no row",
  },
  {
    file: 'lib/broker/processor/admin-broker-processor.ts',
    rules: ['raw-frame', 'extFields-literal', 'raw-send'],
    reason:
      "pass-through forwarding (Java's Broker2Client.callClient): GET_CONSUMER_RUNNING_INFO is relayed to the client with its fields as they came, and the client's answer relayed back unread",
  },
  {
    file: 'lib/broker/processor/request-processor.ts',
    rules: ['raw-send'],
    reason: "the broker's call path to a client (callClient): the request is encoded by the row just before",
  },
  {
    file: 'lib/client/operation-call.ts',
    rules: ['raw-send'],
    reason: "the client's call path itself: the request is encoded by the row just before",
  },
  {
    file: 'lib/client/name-server-client.ts',
    rules: ['raw-send'],
    reason:
      'name-server failover: one request, encoded by the row, tried on each name server in turn; the answer is read by readCallReply',
  },
];

interface Finding {
  file: string;
  line: number;
  rule: string;
  text: string;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Each line's code without its comment (a line that is only a comment is empty). */
function codeLines(text: string): string[] {
  let inBlock = false;
  return text.split('\n').map((line) => {
    let code = line;
    if (inBlock) {
      const end = code.indexOf('*/');
      if (end < 0) return '';
      inBlock = false;
      code = code.slice(end + 2);
    }
    const start = code.indexOf('/*');
    if (start >= 0 && !code.slice(0, start).includes("'") && !code.slice(0, start).includes('`')) {
      const end = code.indexOf('*/', start + 2);
      if (end < 0) {
        inBlock = true;
        code = code.slice(0, start);
      } else code = code.slice(0, start) + code.slice(end + 2);
    }
    const slashes = code.search(/(^|\s)\/\//);
    return slashes >= 0 ? code.slice(0, slashes) : code;
  });
}

function scan(root: string): Finding[] {
  const found: Finding[] = [];
  for (const file of sourceFiles(path.join(root, 'lib'))) {
    const rel = path.relative(root, file).split(path.sep).join('/');
    // capture/ reads recorded traffic of any request code (and any version) to report on it; it
    // never sends or serves anything
    if (rel.startsWith('lib/capture/')) continue;
    codeLines(fs.readFileSync(file, 'utf8')).forEach((code, i) => {
      for (const rule of RULES)
        if (rule.re.test(code)) found.push({ file: rel, line: i + 1, rule: rule.name, text: code.trim() });
    });
  }
  return found;
}

const root = repoRoot();
const findings = scan(root);
const allowed = (f: Finding, list: readonly Exception[]) =>
  list.some((e) => e.file === f.file && e.rules.includes(f.rule));

t.test('lib/ builds and sends requests and answers only through the operation table', async (t) => {
  const unlisted = findings.filter((f) => !allowed(f, EXCEPTIONS));
  t.same(
    unlisted.map((f) => `${f.file}:${f.line} ${RULES.find((r) => r.name === f.rule)!.what}: ${f.text}`),
    [],
    'use call / serve (lib/client/operation-call.ts) or serve / callClient (lib/broker/processor/request-processor.ts) with a row of protocol/operations.ts',
  );
});

t.test('every listed exception still matches something, with a reason', async (t) => {
  for (const e of EXCEPTIONS) {
    t.ok(e.reason.length > 20, `${e.file}: a reason`);
    for (const rule of e.rules) {
      t.ok(
        findings.some((f) => f.file === e.file && f.rule === rule),
        `${e.file} (${rule}) still needs its exception; remove it when it does not`,
      );
    }
  }
});

t.test('the scan sees what it is meant to see', async (t) => {
  const probe = (code: string) => RULES.filter((r) => r.re.test(code)).map((r) => r.name);
  t.same(probe("createRequest(op.code, { extFields: { bname: 'b' } })"), ['extFields-literal', 'raw-frame']);
  t.same(probe('res.extFields = { ...res.extFields, ...fields };'), ['extFields-write']);
  t.same(probe('const bname = req.extFields?.bname;'), ['extFields-read']);
  t.same(probe('await this.remoting.invoke(addr, request, { timeoutMs });'), ['raw-send']);
  t.same(probe('void c.conn.invokeOneway(notify);'), ['raw-send']);
  t.same(probe('return call(remoting, stamp, addr, op, header, body, opts);'), []);
  t.same(probe('if (res.extFields === null) return;'), []);
});
