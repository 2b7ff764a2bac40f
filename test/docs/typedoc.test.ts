// The API reference: `npx typedoc` (typedoc.json) must build it from the two entry points with no
// warning at all (treatWarningsAsErrors: a name missing from the reference, a broken link, a type
// the surface mentions but does not export without saying so), and every name of the committed
// API report (test/api/api-report.txt) must be in it, in its entry point, with a page. Every option
// (a property of an `…Options` interface) has a description and its `@default`; every name of the
// application's entry points has a category, and every field of their interfaces a description.
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

interface JsonComment {
  summary?: Array<{ kind: string; text: string }>;
  blockTags?: Array<{ tag: string; content?: Array<{ kind: string; text: string }> }>;
}

interface JsonReflection {
  id?: number;
  name: string;
  /** ReflectionKind: 256 interface, 1024 property. */
  kind?: number;
  variant?: string;
  flags?: { isOptional?: boolean };
  comment?: JsonComment;
  signatures?: Array<{ comment?: unknown }>;
  children?: JsonReflection[];
  categories?: Array<{ title: string; children?: number[] }>;
}

/** A doc comment on the declaration, or on a function's (first documented) signature. */
function documented(r: JsonReflection): boolean {
  return r.comment !== undefined || (r.signatures ?? []).some((s) => s.comment !== undefined);
}

const INTERFACE = 256;
const PROPERTY = 1024;

/**
 * Optional options that have no default to write down, with why. Prefer writing the default
 * (`@default undefined (no …)` when unset means something) to a line here.
 */
export const NO_DEFAULT: Readonly<Record<string, string>> = {
  'PushConsumerOptions.group':
    'required; optional in the type only because its alias consumerGroup may be given instead',
  'LitePullConsumerOptions.group':
    'required; optional in the type only because its alias consumerGroup may be given instead',
  'SimpleConsumerOptions.group':
    'required; optional in the type only because its alias consumerGroup may be given instead',
};

function text(parts: Array<{ text: string }> | undefined): string {
  return (parts ?? [])
    .map((p) => p.text)
    .join('')
    .trim();
}

/**
 * What the reference of an options interface lacks: every property (inherited ones included) of an
 * exported interface whose name ends in `Options` needs a description, and an optional one its
 * `@default` too, unless it is a `@deprecated` alias (its default is the option it names) or is
 * listed in `noDefault`. Answers one line per miss, "Interface.property: what is missing".
 */
export function optionProblems(
  module: JsonReflection,
  noDefault: Readonly<Record<string, string>> = NO_DEFAULT,
): string[] {
  const out: string[] = [];
  for (const iface of module.children ?? []) {
    if (iface.kind !== INTERFACE || iface.variant === 'reference' || !iface.name.endsWith('Options')) continue;
    for (const prop of iface.children ?? []) {
      if (prop.kind !== PROPERTY) continue;
      const key = `${iface.name}.${prop.name}`;
      const tags = prop.comment?.blockTags ?? [];
      if (text(prop.comment?.summary) === '') out.push(`${key}: no description`);
      const deprecated = tags.some((t) => t.tag === '@deprecated');
      const hasDefault = tags.some((t) => t.tag === '@default' && text(t.content) !== '');
      if (prop.flags?.isOptional && !hasDefault && !deprecated && !(key in noDefault)) out.push(`${key}: no @default`);
    }
  }
  return out;
}

/**
 * Members of a module's exported interfaces (inherited ones included) that have no description:
 * "Interface.member". A method counts as described when one of its signatures is.
 */
export function undocumentedFields(module: JsonReflection): string[] {
  const described = (c: JsonComment | undefined): boolean => text(c?.summary) !== '';
  const out: string[] = [];
  for (const iface of module.children ?? []) {
    if (iface.kind !== INTERFACE || iface.variant === 'reference') continue;
    for (const m of iface.children ?? []) {
      const sigs = (m.signatures ?? []) as Array<{ comment?: JsonComment }>;
      if (!described(m.comment) && !sigs.some((s) => described(s.comment))) out.push(`${iface.name}.${m.name}`);
    }
  }
  return out;
}

/** Names of a module that are in no category (the reference lists them under "Other"). */
export function uncategorized(module: JsonReflection): string[] {
  const inCategory = new Set<number>();
  for (const c of module.categories ?? [])
    if (c.title !== 'Other') for (const id of c.children ?? []) inCategory.add(id);
  return (module.children ?? [])
    .filter((c) => c.variant !== 'reference' && !inCategory.has(c.id ?? -1))
    .map((c) => c.name);
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (output += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (output += s));
    child.on('close', (code) => resolve({ code, output }));
  });
}

t.test(
  'typedoc builds the reference of both entry points without a warning, with a page for every exported name',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rocketwire-typedoc-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const html = path.join(dir, 'api');
    const json = path.join(dir, 'api.json');
    const typedoc = path.join(root, 'node_modules', 'typedoc', 'bin', 'typedoc');
    // typedoc.json as committed; only where the output goes changes.
    const { code, output } = await run(process.execPath, [
      typedoc,
      '--options',
      'typedoc.json',
      '--out',
      html,
      '--json',
      json,
    ]);
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
      t.same(
        names.filter((n) => !inReference.has(n)),
        [],
        `${specifier}: every name of the API report is in the reference`,
      );
      t.same(
        [...inReference].filter((n) => !names.includes(n)),
        [],
        `${specifier}: nothing else is`,
      );
      // A name both entry points export (RocketwireError, MessageExt…) has one page, under the
      // entry point TypeDoc met first; the other lists it as a reference to that page.
      const hasPage = (n: string): boolean =>
        [...expected.keys()].some((s) => pages.has(`${s.replace(/\//g, '_')}.${n}.html`));
      t.same(
        names.filter((n) => !hasPage(n)),
        [],
        `${specifier}: every name has its page`,
      );
    }
    // What an application or a protocol user imports says what it is, in both entry points. A name
    // both export is checked where its page is; the other entry point only refers to it. A value and
    // a type of the same name (a typed header, a body codec) are two reflections, each checked.
    for (const specifier of expected.keys()) {
      const own = (modules.get(specifier)?.children ?? []).filter((c) => c.variant !== 'reference');
      t.ok(own.length > 0, `${specifier}: has names of its own`);
      t.same(
        own.filter((c) => !documented(c)).map((c) => c.name),
        [],
        `${specifier}: every name has a doc comment`,
      );
      // Every option says what it does and, when it may be left out, what it then is.
      t.same(
        optionProblems(modules.get(specifier) ?? { name: specifier }),
        [],
        `${specifier}: every option has a description and its @default`,
      );
      // The application's entry points are grouped by what a user does (typedoc.json categoryOrder):
      // a new export needs an @category tag. rocketwire/protocol, the codec, stays listed by kind.
      if (specifier !== 'rocketwire/protocol') {
        t.same(
          uncategorized(modules.get(specifier) ?? { name: specifier }),
          [],
          `${specifier}: every name has an @category`,
        );
        // What the application reads (health(), stats(), events, received messages…) says what each
        // field is. (The codec's own interfaces are not held to it yet.)
        t.same(
          undocumentedFields(modules.get(specifier) ?? { name: specifier }),
          [],
          `${specifier}: every field of its interfaces has a doc comment`,
        );
      }
    }
    // The exceptions name options that exist.
    const optionKeys = new Set<string>();
    for (const m of modules.values())
      for (const i of m.children ?? []) for (const p of i.children ?? []) optionKeys.add(`${i.name}.${p.name}`);
    t.same(
      Object.keys(NO_DEFAULT).filter((k) => !optionKeys.has(k)),
      [],
      'every NO_DEFAULT entry is an option of the reference',
    );
  },
);

t.test('optionProblems: an option needs a description, and an optional one a @default', async (t) => {
  const summary = [{ kind: 'text', text: 'What it does.' }];
  const dflt = { tag: '@default', content: [{ kind: 'code', text: '5' }] };
  const prop = (name: string, comment: JsonComment | undefined, isOptional = true): JsonReflection => ({
    name,
    kind: PROPERTY,
    flags: { isOptional },
    ...(comment ? { comment } : {}),
  });
  const module: JsonReflection = {
    name: 'm',
    children: [
      {
        name: 'FooOptions',
        kind: INTERFACE,
        children: [
          prop('good', { summary, blockTags: [dflt] }),
          prop('required', { summary }, false),
          prop('bare', undefined),
          prop('noDefault', { summary }),
          prop('emptyDefault', { summary, blockTags: [{ tag: '@default', content: [] }] }),
          prop('tagsOnly', { summary: [], blockTags: [dflt] }),
          prop('alias', {
            summary,
            blockTags: [{ tag: '@deprecated', content: [{ kind: 'text', text: 'use good' }] }],
          }),
          prop('excused', { summary }),
        ],
      },
      { name: 'FooOptions', kind: INTERFACE, variant: 'reference' },
      { name: 'Bar', kind: INTERFACE, children: [prop('undocumented', undefined)] },
    ],
  };
  t.same(
    optionProblems(module, { 'FooOptions.excused': 'a reason' }),
    [
      'FooOptions.bare: no description',
      'FooOptions.bare: no @default',
      'FooOptions.noDefault: no @default',
      'FooOptions.emptyDefault: no @default',
      'FooOptions.tagsOnly: no description',
    ],
    'a required option needs no @default, a @deprecated alias neither; a reference and a non-options interface are not checked',
  );
  t.same(
    optionProblems(module, {}).filter((l) => l.startsWith('FooOptions.excused')),
    ['FooOptions.excused: no @default'],
    'an unlisted option without a default fails',
  );
});

t.test('undocumentedFields: interface members without a description', async (t) => {
  const comment = { summary: [{ kind: 'text', text: 'What it is.' }] };
  const module: JsonReflection = {
    name: 'm',
    children: [
      {
        name: 'Health',
        kind: INTERFACE,
        children: [
          { name: 'ok', kind: PROPERTY, comment },
          { name: 'bare', kind: PROPERTY },
          {
            name: 'tagsOnly',
            kind: PROPERTY,
            comment: { summary: [], blockTags: [{ tag: '@deprecated', content: [] }] },
          },
          { name: 'method', kind: 2048, signatures: [{}, { comment }] },
          { name: 'undocumentedMethod', kind: 2048, signatures: [{}] },
        ],
      },
      { name: 'Health', kind: INTERFACE, variant: 'reference' },
      { name: 'AClass', kind: 128, children: [{ name: 'bare', kind: PROPERTY }] },
    ],
  };
  t.same(undocumentedFields(module), ['Health.bare', 'Health.tagsOnly', 'Health.undocumentedMethod']);
});

t.test('uncategorized: names in no category, or only in "Other"', async (t) => {
  const module: JsonReflection = {
    name: 'm',
    children: [
      { id: 1, name: 'A' },
      { id: 2, name: 'B' },
      { id: 3, name: 'C' },
      { id: 4, name: 'R', variant: 'reference' },
    ],
    categories: [
      { title: 'Producing', children: [1] },
      { title: 'Other', children: [2] },
    ],
  };
  t.same(uncategorized(module), ['B', 'C']);
});

t.test('documented: a comment on the declaration or on one of its signatures, nothing else', async (t) => {
  const comment = { summary: [{ kind: 'text', text: 'x' }] };
  t.equal(documented({ name: 'A', comment }), true);
  t.equal(documented({ name: 'f', signatures: [{}, { comment }] }), true);
  t.equal(documented({ name: 'B' }), false);
  t.equal(documented({ name: 'g', signatures: [{}] }), false);
  t.equal(
    documented({ name: 'C', children: [{ name: 'member', comment }] }),
    false,
    'a documented member does not document its parent',
  );
});

t.test('reportNames reads the sections of the API report', async (t) => {
  const report =
    '# header\n\n## rocketwire (dist/lib/index.d.ts): 2 names\n\nA: class\nb: function\n\n## rocketwire/protocol (x): 1 names\n\nC: const + type\n';
  t.same(
    [...reportNames(report)],
    [
      ['rocketwire', ['A', 'b']],
      ['rocketwire/protocol', ['C']],
    ],
  );
});
