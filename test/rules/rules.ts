// The house rules that no formatter or generic linter knows: what each folder may import (the
// layer table of ARCHITECTURE.md, read from that file so the table is the rule), no import cycle,
// no file over 500 lines, no bare `throw new Error`, error classes in errors.ts, no global timer
// or wall clock in the runtime outside lib/clock.ts, and no floating promise. `npm run check`
// runs them (test/rules/check.ts); test/rules/rules.test.ts proves each one catches what it names.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface Violation {
  rule: string;
  /** Path relative to the repository root, `/`-separated. */
  file: string;
  /** 1-based. */
  line: number;
  message: string;
}

/** Source files by path relative to the repository root. */
export type Sources = Map<string, string>;

export const MAX_FILE_LINES = 500;

/** The folders the rules look at: the published code. */
export const CHECKED_ROOTS = ['lib', 'protocol'];

/** Every `.ts`/`.cts` file (not `.d.ts`) under `roots`, read from `root`; with `built`, the `.js`/`.cjs` files tsc wrote. */
export function loadSources(root: string, roots: readonly string[] = CHECKED_ROOTS, built = false): Sources {
  const wanted = built ? /\.c?js$/ : /\.c?ts$/;
  const out: Sources = new Map();
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(child);
      else if (wanted.test(e.name) && !e.name.endsWith('.d.ts'))
        out.set(child, fs.readFileSync(path.join(root, child), 'utf8'));
    }
  };
  for (const r of roots) if (fs.existsSync(path.join(root, r))) walk(r);
  return out;
}

function parse(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
}

function lineOf(sf: ts.SourceFile, node: ts.Node): number {
  return sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
}

function visit(node: ts.Node, f: (n: ts.Node) => void): void {
  f(node);
  ts.forEachChild(node, (c) => visit(c, f));
}

// ---- file length --------------------------------------------------------------------------------

export function longFiles(src: Sources, max = MAX_FILE_LINES): Violation[] {
  const out: Violation[] = [];
  for (const [file, text] of src) {
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > max)
      out.push({
        rule: 'file-length',
        file,
        line: max + 1,
        message: `${lines} lines (at most ${max}): split it by concept`,
      });
  }
  return out;
}

// ---- bare Error ----------------------------------------------------------------------------------

/** `throw new Error(…)` (or `throw Error(…)`): everything thrown from lib/ is a typed RocketwireError. */
export function bareThrows(src: Sources): Violation[] {
  const out: Violation[] = [];
  for (const [file, text] of src) {
    const sf = parse(file, text);
    visit(sf, (n) => {
      if (!ts.isThrowStatement(n)) return;
      const e = n.expression;
      if (
        (ts.isNewExpression(e) || ts.isCallExpression(e)) &&
        ts.isIdentifier(e.expression) &&
        e.expression.text === 'Error'
      )
        out.push({
          rule: 'bare-error',
          file,
          line: lineOf(sf, n),
          message:
            'throw of a bare Error: throw a RocketwireError subclass (protocol/errors.ts or the folder’s errors.ts)',
        });
    });
  }
  return out;
}

// ---- error classes where errors live -------------------------------------------------------------

/** A file that may declare error classes: `errors.ts`, `*-errors.ts`, or a file under an `errors/` folder. */
export function isErrorsFile(file: string): boolean {
  const base = path.posix.basename(file);
  return base === 'errors.ts' || base.endsWith('-errors.ts') || file.includes('/errors/');
}

/** A class whose name ends in `Error` and that extends something, declared outside an errors file. */
export function misplacedErrorClasses(src: Sources): Violation[] {
  const out: Violation[] = [];
  for (const [file, text] of src) {
    if (isErrorsFile(file)) continue;
    const sf = parse(file, text);
    for (const st of sf.statements) {
      if (!ts.isClassDeclaration(st) || !st.name?.text.endsWith('Error')) continue;
      if (!st.heritageClauses?.some((h) => h.token === ts.SyntaxKind.ExtendsKeyword)) continue;
      out.push({
        rule: 'error-placement',
        file,
        line: lineOf(sf, st),
        message: `error class ${st.name.text} outside an errors.ts: move it to the folder's errors.ts`,
      });
    }
  }
  return out;
}

// ---- imports -------------------------------------------------------------------------------------

/** file → the repository files it imports (relative specifiers only; `import type` counts too). */
export function importGraph(src: Sources): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const [file, text] of src) {
    const info = ts.preProcessFile(text, true, true);
    const deps: string[] = [];
    for (const imp of info.importedFiles) {
      const spec = imp.fileName;
      if (!spec.startsWith('.')) continue;
      const target = resolveSpecifier(file, spec, src);
      if (target !== undefined) deps.push(target);
    }
    g.set(file, deps);
  }
  return g;
}

function resolveSpecifier(from: string, spec: string, src: Sources): string | undefined {
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  const stem = joined.replace(/\.(c?js|c?ts)$/, '');
  for (const cand of [`${stem}.ts`, `${stem}.cts`, `${stem}.js`, `${stem}.cjs`, `${stem}/index.ts`, `${stem}/index.js`])
    if (src.has(cand)) return cand;
  return undefined;
}

/** The strongly connected components with more than one file, and files importing themselves (Tarjan). */
export function importCycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const strong = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const comp: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(comp.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) strong(v);
  return out;
}

export function cycleViolations(graph: Map<string, string[]>): Violation[] {
  return importCycles(graph).map((c) => ({
    rule: 'import-cycle',
    file: c[0] as string,
    line: 1,
    message: `import cycle of ${c.length} files: ${c.join(' → ')}`,
  }));
}

/** One row of ARCHITECTURE.md's "What a folder may import": folders (or `*` for every folder of lib/) and what they may import. */
export interface LayerRule {
  folders: string[];
  /** Folders (`lib/client`, `protocol`) and files (`lib/clock.ts`); `lib/**` for anything in lib/. */
  mayImport: string[];
}

/**
 * Reads the table that follows the line "What a folder may import" in ARCHITECTURE.md: first column
 * the folders (in backticks), second what they may import (backticked paths; "anything in lib/" is
 * every folder of lib/ and protocol/). A row whose first column says "every folder" applies to all.
 */
export function parseLayerTable(markdown: string): LayerRule[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /What a folder may import/.test(l));
  if (start < 0) throw new Error('ARCHITECTURE.md has no "What a folder may import" table');
  const rules: LayerRule[] = [];
  for (const l of lines.slice(start + 1)) {
    if (!l.startsWith('|')) {
      if (rules.length > 0) break;
      continue;
    }
    const cells = l.split('|').slice(1, -1);
    if (cells.length < 2 || /^\s*-+\s*$/.test(cells[0] as string) || /^\s*folder\s*$/.test(cells[0] as string))
      continue;
    const paths = (cell: string): string[] =>
      [...cell.matchAll(/`([^`]+)`/g)]
        .map((m) => (m[1] as string).replace(/\/$/, ''))
        .filter((p) => p === 'protocol' || p.startsWith('lib/') || p.startsWith('bench/'));
    const first = cells[0] as string;
    const folders = /every folder/.test(first) ? ['*'] : paths(first);
    const second = cells[1] as string;
    const mayImport = paths(second);
    if (/anything in lib\//.test(second)) mayImport.push('lib/**', 'protocol');
    if (folders.length > 0) rules.push({ folders, mayImport });
  }
  return rules;
}

/** The folder a file belongs to for the layer table: `protocol`, `lib/<name>`, or the file itself for lib/'s top level. */
export function layerOf(file: string): string {
  if (file.startsWith('protocol/')) return 'protocol';
  const parts = file.split('/');
  if (parts[0] === 'lib' && parts.length > 2) return `lib/${parts[1]}`;
  return file;
}

function allowed(target: string, list: readonly string[]): boolean {
  return list.some((p) => {
    if (p === 'lib/**') return target.startsWith('lib/');
    if (p.endsWith('.ts')) return target === p;
    return target === p || target.startsWith(`${p}/`);
  });
}

/** Imports that cross layers against the table. Files of lib/'s top level (entry point, clock, logger…) are not rows. */
export function layerViolations(graph: Map<string, string[]>, rules: readonly LayerRule[]): Violation[] {
  const everyone = rules.filter((r) => r.folders.includes('*')).flatMap((r) => r.mayImport);
  const out: Violation[] = [];
  for (const [file, deps] of graph) {
    const layer = layerOf(file);
    const row = rules.find((r) => r.folders.includes(layer));
    if (row === undefined) continue;
    const list = [layer, ...row.mayImport, ...(layer === 'protocol' ? [] : everyone)];
    for (const d of deps) {
      if (allowed(d, list)) continue;
      out.push({
        rule: 'layers',
        file,
        line: 1,
        message: `${layer} may not import ${d} (ARCHITECTURE.md, "What a folder may import")`,
      });
    }
  }
  return out;
}

// ---- time ----------------------------------------------------------------------------------------

/** Where the runtime may use the global timers and wall clock, with the reason. */
export const TIME_EXCEPTIONS: Record<string, string> = {
  'lib/clock.ts': 'the clock itself: systemClock wraps the global timers and Date.now()',
  'lib/cli/':
    "the command's own process: its watchdogs, the ref'd idle-exit timer that keeps the process alive, progress lines",
  'lib/capture/': 'the capture decoder reads files: no timed rule, only dates printed from packet timestamps',
};

/** Global setTimeout/setInterval/setImmediate calls, `Date.now()` and `new Date()` without an argument. */
export function globalTime(src: Sources, exceptions: Record<string, string> = TIME_EXCEPTIONS): Violation[] {
  const out: Violation[] = [];
  const keys = Object.keys(exceptions);
  for (const [file, text] of src) {
    if (!file.startsWith('lib/') || keys.some((k) => file === k || (k.endsWith('/') && file.startsWith(k)))) continue;
    const sf = parse(file, text);
    visit(sf, (n) => {
      let what: string | undefined;
      if (ts.isCallExpression(n)) {
        const c = n.expression;
        if (ts.isIdentifier(c) && /^(setTimeout|setInterval|setImmediate)$/.test(c.text)) what = `${c.text}()`;
        else if (
          ts.isPropertyAccessExpression(c) &&
          ts.isIdentifier(c.expression) &&
          c.expression.text === 'Date' &&
          c.name.text === 'now'
        )
          what = 'Date.now()';
      } else if (
        ts.isNewExpression(n) &&
        ts.isIdentifier(n.expression) &&
        n.expression.text === 'Date' &&
        (n.arguments?.length ?? 0) === 0
      )
        what = 'new Date()';
      if (what !== undefined)
        out.push({
          rule: 'clock',
          file,
          line: lineOf(sf, n),
          message: `${what} outside lib/clock.ts: take the injected clock (lib/clock.ts) so tests can drive it`,
        });
    });
  }
  return out;
}

// ---- floating promises ---------------------------------------------------------------------------

function isThenable(checker: ts.TypeChecker, type: ts.Type, node: ts.Node): boolean {
  if (type.isUnion()) return type.types.some((t) => isThenable(checker, t, node));
  const then = type.getProperty('then');
  if (then === undefined) return false;
  return checker.getTypeOfSymbolAtLocation(then, node).getCallSignatures().length > 0;
}

/**
 * An expression statement whose value is a promise, neither awaited, returned, handed to `void`, nor
 * ended by `.catch(…)` or a two-argument `.then(…)`: its rejection would be unhandled.
 */
export function floatingPromises(
  program: ts.Program,
  root: string,
  roots: readonly string[] = CHECKED_ROOTS,
): Violation[] {
  const checker = program.getTypeChecker();
  const out: Violation[] = [];
  for (const sf of program.getSourceFiles()) {
    const file = path.relative(root, sf.fileName).split(path.sep).join('/');
    if (!roots.some((r) => file.startsWith(`${r}/`)) || sf.isDeclarationFile) continue;
    visit(sf, (n) => {
      if (!ts.isExpressionStatement(n)) return;
      let e = n.expression;
      while (ts.isParenthesizedExpression(e)) e = e.expression;
      if (ts.isVoidExpression(e) || ts.isAwaitExpression(e)) return;
      if (!ts.isCallExpression(e) && !ts.isNewExpression(e)) return;
      if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) {
        const m = e.expression.name.text;
        if (m === 'catch' || (m === 'then' && e.arguments.length >= 2)) return;
      }
      if (!isThenable(checker, checker.getTypeAtLocation(e), e)) return;
      out.push({
        rule: 'floating-promise',
        file,
        line: lineOf(sf, n),
        message:
          'a promise nobody awaits: await it, return it, end it with .catch(), or mark a deliberate fire-and-forget with void',
      });
    });
  }
  return out;
}

/** The program of tsconfig.json (what `tsc` builds), for the type-aware rules and the compiler's own diagnostics. */
export function loadProgram(root: string): ts.Program {
  const configPath = path.join(root, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root);
  return ts.createProgram({
    rootNames: parsed.fileNames,
    options: { ...parsed.options, noEmit: true, incremental: false },
  });
}

/** Every rule that reads sources only (no type checker), over lib/ and protocol/ of `root`. */
export function sourceRules(root: string): Violation[] {
  const src = loadSources(root);
  const graph = importGraph(src);
  const table = parseLayerTable(fs.readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8'));
  return [
    ...layerViolations(graph, table),
    ...cycleViolations(graph),
    ...longFiles(src),
    ...bareThrows(src),
    ...misplacedErrorClasses(src),
    ...globalTime(src),
  ];
}
