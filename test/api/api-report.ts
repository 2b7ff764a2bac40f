// The API report: every name each package entry point exports, with its kind, read by the
// TypeScript compiler from the built declarations (dist/**/*.d.ts), so it lists what a user of the
// published package sees and nothing that only the sources know. The entry points are the
// `exports` of package.json that have a `types` condition, so a new entry point is reported
// without touching this file.
//
//   npm run api-report          rebuild, then rewrite test/api/api-report.txt
//   node dist/test/api/api-report.js [--write]   the same on an existing build (stdout without --write)
//
// test/api/api-report.test.ts regenerates the report in memory and fails when it differs from the
// committed file, so every change of the public surface shows up in review as a change of that file.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const REPORT_FILE = 'test/api/api-report.txt';
export const UPDATE_COMMAND = 'npm run api-report';

export interface EntryPoint {
  /** The specifier a user imports: `rocketwire`, `rocketwire/protocol`. */
  specifier: string;
  /** The declaration file it resolves to, relative to the repository root. */
  types: string;
}

export interface ExportedName {
  name: string;
  /** `class`, `function`, `const`, `interface`, `type`, `enum`…; merged declarations join with ` + `. */
  kind: string;
  /** Its declarations as the built `.d.ts` has them, comments removed and printed by the compiler's printer. */
  signature: string;
}

/** The directory holding package.json, found upwards from this file (it runs from dist/test/api). */
export function repoRoot(from = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export function entryPoints(root: string): EntryPoint[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports?: Record<string, unknown>;
  };
  const result: EntryPoint[] = [];
  for (const [key, target] of Object.entries(pkg.exports ?? {})) {
    if (typeof target !== 'object' || target === null) continue;
    const types = (target as { types?: unknown }).types;
    if (typeof types !== 'string') continue;
    result.push({ specifier: key === '.' ? pkg.name : pkg.name + key.slice(1), types: path.normalize(types) });
  }
  return result.sort((a, b) => compare(a.specifier, b.specifier));
}

// Byte order rather than localeCompare: the same on every machine and locale.
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function kindsOf(symbol: ts.Symbol): string {
  const f = symbol.flags;
  const kinds: string[] = [];
  if (f & ts.SymbolFlags.Class) kinds.push(symbol.declarations?.some(isAbstractClass) ? 'abstract class' : 'class');
  if (f & ts.SymbolFlags.ConstEnum) kinds.push('const enum');
  else if (f & ts.SymbolFlags.RegularEnum) kinds.push('enum');
  if (f & ts.SymbolFlags.Function) kinds.push('function');
  if (f & ts.SymbolFlags.Variable) kinds.push(variableKind(symbol));
  if (f & ts.SymbolFlags.Interface) kinds.push('interface');
  if (f & ts.SymbolFlags.TypeAlias) kinds.push('type');
  if (f & (ts.SymbolFlags.ValueModule | ts.SymbolFlags.NamespaceModule)) kinds.push('namespace');
  return kinds.length > 0 ? kinds.join(' + ') : `unknown (flags ${f})`;
}

function isAbstractClass(d: ts.Declaration): boolean {
  return ts.isClassDeclaration(d) && (ts.getCombinedModifierFlags(d) & ts.ModifierFlags.Abstract) !== 0;
}

function variableKind(symbol: ts.Symbol): string {
  const decl = symbol.declarations?.find(ts.isVariableDeclaration);
  const list = decl?.parent;
  if (list && ts.isVariableDeclarationList(list)) {
    if (list.flags & ts.NodeFlags.Const) return 'const';
    if (list.flags & ts.NodeFlags.Let) return 'let';
  }
  return 'var';
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/**
 * The members of every object type literal in name order, and of every union by their text. tsc
 * writes an inferred type's members in the order its checker met them, which differs between a
 * clean and an incremental build; the report must not.
 */
function sortTypeLiterals(node: ts.Node, sf: ts.SourceFile): ts.Node {
  const name = (m: ts.TypeElement): string => (m.name !== undefined && ts.isIdentifier(m.name) ? m.name.text : '');
  const visit = (n: ts.Node): ts.Node => {
    const v = ts.visitEachChild(n, visit, undefined);
    // A union's members likewise (`12 | 10 | 11` and `10 | 11 | 12` are one type): by their text.
    if (ts.isUnionTypeNode(v)) {
      const text = (t: ts.TypeNode): string => printer.printNode(ts.EmitHint.Unspecified, t, sf);
      const types = [...v.types].sort((a, b) => compare(text(a), text(b)));
      return ts.factory.updateUnionTypeNode(v, ts.factory.createNodeArray(types));
    }
    if (!ts.isTypeLiteralNode(v)) return v;
    const members = [...v.members].sort((a, b) => compare(name(a), name(b)));
    return ts.factory.updateTypeLiteralNode(v, ts.factory.createNodeArray(members));
  };
  return visit(node);
}

/**
 * The declarations of an exported symbol, normalized: printed without comments by the compiler's
 * printer (so formatting and doc edits do not show), `export`/`declare` dropped, a variable with its
 * type. A changed parameter, member or type then changes the report.
 */
function signatureOf(symbol: ts.Symbol): string {
  const parts: string[] = [];
  for (const d of symbol.declarations ?? []) {
    const sf = d.getSourceFile();
    let node: ts.Node = d;
    if (ts.isVariableDeclaration(d)) node = d.parent.parent;
    let text = printer.printNode(ts.EmitHint.Unspecified, sortTypeLiterals(node, sf), sf);
    text = text.replace(/^(export )?(declare )?/, '');
    // A type tsc reached through another module is written `import("./x.js").Name`, and which
    // module it names depends on the build's history (internal.js or index.js): the name is enough.
    text = text.replace(/import\("[^"]+"\)\./g, '');
    // Private members are not the surface: a refactor that renames one must not change the report.
    text = text
      .split('\n')
      .filter((l) => !/^\s+(private\b|#private;)/.test(l))
      .join('\n');
    parts.push(text.trim());
  }
  return parts.join('\n');
}

/** Every name exported by each entry point, sorted; entry points in specifier order. */
export function collectExports(root: string): Map<EntryPoint, ExportedName[]> {
  const points = entryPoints(root);
  const files = points.map((p) => path.join(root, p.types));
  for (const f of files) {
    if (!fs.existsSync(f)) throw new Error(`${f} is missing: build first (npx tsc -p tsconfig.json)`);
  }
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: ['node'],
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const result = new Map<EntryPoint, ExportedName[]>();
  points.forEach((point, i) => {
    const source = program.getSourceFile(files[i]!);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${point.types} is not a module`);
    const names = checker.getExportsOfModule(moduleSymbol).map((s) => {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
      return { name: s.getName(), kind: kindsOf(target), signature: signatureOf(target) };
    });
    result.set(
      point,
      names.sort((a, b) => compare(a.name, b.name)),
    );
  });
  return result;
}

export function renderReport(exports: Map<EntryPoint, ExportedName[]>): string {
  const lines = [
    '# The public API of rocketwire: every exported name of each entry point, with its kind and its',
    '# declaration as the built .d.ts has it (comments removed, printed by the TypeScript printer).',
    `# Generated from the built declarations by test/api/api-report.ts; do not edit, run \`${UPDATE_COMMAND}\`.`,
  ];
  for (const [point, names] of exports) {
    lines.push('', `## ${point.specifier} (${point.types}): ${names.length} names`, '');
    // No column alignment: adding a long name must not re-indent every other line of the diff.
    for (const n of names) {
      lines.push(`${n.name}: ${n.kind}`);
      for (const l of n.signature.split('\n')) lines.push(`    ${l}`);
    }
  }
  return lines.join('\n') + '\n';
}

export function buildApiReport(root = repoRoot()): string {
  return renderReport(collectExports(root));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = repoRoot();
  const report = buildApiReport(root);
  if (process.argv.includes('--write')) {
    fs.writeFileSync(path.join(root, REPORT_FILE), report);
    console.error(`wrote ${REPORT_FILE}`);
  } else {
    process.stdout.write(report);
  }
}
