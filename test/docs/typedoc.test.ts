// The API reference: `npx typedoc` (typedoc.json) must build it from the two entry points with no
// warning at all (treatWarningsAsErrors: a name missing from the reference, a broken link, a type
// the surface mentions but does not export without saying so), and every name of the committed
// API report (test/api/api-report.txt) must be in it, in its entry point, with a page.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import t from 'tap';
import { REPORT_FILE, repoRoot } from '../api/api-report.js';

const root = repoRoot();

/** `## rocketwire (dist/lib/index.d.ts): 112 names` sections of the report: specifier → names. */
export function reportNames(report: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let names: string[] | null = null;
  for (const line of report.split('\n')) {
    const section = /^## (\S+) /.exec(line);
    if (section) out.set(section[1]!, (names = []));
    else if (names && /^\w+: /.test(line)) names.push(line.slice(0, line.indexOf(':')));
  }
  return out;
}

interface JsonReflection {
  name: string;
  variant?: string;
  comment?: unknown;
  signatures?: Array<{ comment?: unknown }>;
  children?: JsonReflection[];
}

/** A doc comment on the declaration, or on a function's (first documented) signature. */
function documented(r: JsonReflection): boolean {
  return r.comment !== undefined || (r.signatures ?? []).some((s) => s.comment !== undefined);
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (output += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (output += s));
    child.on('close', (code) => resolve({ code, output }));
  });
}

t.test('typedoc builds the reference of both entry points without a warning, with a page for every exported name', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-typedoc-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const html = path.join(dir, 'api');
  const json = path.join(dir, 'api.json');
  const typedoc = path.join(root, 'node_modules', 'typedoc', 'bin', 'typedoc');
  // typedoc.json as committed; only where the output goes changes.
  const { code, output } = await run(process.execPath, [typedoc, '--options', 'typedoc.json', '--out', html, '--json', json]);
  t.equal(code, 0, 'typedoc exits 0', { output });
  t.notMatch(output, /\[warning\]|\[error\]/, 'no warning, no error', { output });
  if (code !== 0) return;

  const project = JSON.parse(fs.readFileSync(json, 'utf8')) as JsonReflection;
  const modules = new Map((project.children ?? []).map((m) => [m.name, m]));
  const pages = new Set<string>();
  for (const kindDir of fs.readdirSync(html, { withFileTypes: true })) {
    if (kindDir.isDirectory()) for (const f of fs.readdirSync(path.join(html, kindDir.name))) pages.add(f);
  }

  const expected = reportNames(fs.readFileSync(path.join(root, REPORT_FILE), 'utf8'));
  t.same([...modules.keys()], [...expected.keys()], 'one module per entry point, named as users import it');
  for (const [specifier, names] of expected) {
    const inReference = new Set((modules.get(specifier)?.children ?? []).map((c) => c.name));
    t.same(names.filter((n) => !inReference.has(n)), [], `${specifier}: every name of the API report is in the reference`);
    t.same([...inReference].filter((n) => !names.includes(n)), [], `${specifier}: nothing else is`);
    // A name both entry points export (RocketwireError, MessageExt…) has one page, under the
    // entry point TypeDoc met first; the other lists it as a reference to that page.
    const hasPage = (n: string): boolean => [...expected.keys()].some((s) => pages.has(`${s.replace(/\//g, '_')}.${n}.html`));
    t.same(names.filter((n) => !hasPage(n)), [], `${specifier}: every name has its page`);
  }
  // What an application or a protocol user imports says what it is, in both entry points. A name
  // both export is checked where its page is; the other entry point only refers to it. A value and
  // a type of the same name (a typed header, a body codec) are two reflections, each checked.
  for (const specifier of expected.keys()) {
    const own = (modules.get(specifier)?.children ?? []).filter((c) => c.variant !== 'reference');
    t.ok(own.length > 0, `${specifier}: has names of its own`);
    t.same(own.filter((c) => !documented(c)).map((c) => c.name), [], `${specifier}: every name has a doc comment`);
  }
});

t.test('documented: a comment on the declaration or on one of its signatures, nothing else', async (t) => {
  const comment = { summary: [{ kind: 'text', text: 'x' }] };
  t.equal(documented({ name: 'A', comment }), true);
  t.equal(documented({ name: 'f', signatures: [{}, { comment }] }), true);
  t.equal(documented({ name: 'B' }), false);
  t.equal(documented({ name: 'g', signatures: [{}] }), false);
  t.equal(documented({ name: 'C', children: [{ name: 'member', comment }] }), false, 'a documented member does not document its parent');
});

t.test('reportNames reads the sections of the API report', async (t) => {
  const report = '# header\n\n## rocketwire (dist/lib/index.d.ts): 2 names\n\nA: class\nb: function\n\n## rocketwire/protocol (x): 1 names\n\nC: const + type\n';
  t.same([...reportNames(report)], [['rocketwire', ['A', 'b']], ['rocketwire/protocol', ['C']]]);
});
