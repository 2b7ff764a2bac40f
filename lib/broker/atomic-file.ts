import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigFileError, NotAFolderError, StorePathError } from './errors.js';

/** Where the broker says what it found and repaired on disk (one line each; stderr by default). */
export type StoreWarn = (line: string) => void;

/** The default StoreWarn: one line on stderr, prefixed so it can be told from a program's own output. */
export const stderrWarn: StoreWarn = (line) => {
  process.stderr.write(`rocketwire broker: ${line}\n`);
};

/**
 * Replace `file` with `data` so that a crash leaves either the old or the new content: write a
 * temp file beside it, fsync it (when `sync`), rename over the target, fsync the folder. With
 * `keepBak` the replaced content stays as `<file>.bak` (Java's ConfigManager.persist moves the
 * file to .bak before writing; here the .bak is a hard link made first, so `file` itself is never
 * missing, not even between the two renames).
 */
export function writeFileAtomic(file: string, data: string | Buffer, sync = true, keepBak = false): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    if (sync) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (keepBak) keepBackup(file);
  fs.renameSync(tmp, file);
  if (sync) {
    try {
      const dfd = fs.openSync(path.dirname(file), 'r');
      try {
        fs.fsyncSync(dfd);
      } finally {
        fs.closeSync(dfd);
      }
    } catch {
      // some file systems refuse to fsync a directory; the rename is still atomic
    }
  }
}

/** Read a text file, or null when it does not exist. */
export function readTextFile(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * mkdir -p that fails instead of spinning: Node's recursive mkdir loops forever on paths like
 * /proc/x where mkdir answers ENOENT although the parent exists.
 */
export function ensureDir(dir: string): void {
  try {
    fs.mkdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if (!fs.statSync(dir).isDirectory()) throw new NotAFolderError(dir);
      return;
    }
    if (code !== 'ENOENT') throw err;
    const parent = path.dirname(dir);
    if (parent === dir || fs.existsSync(parent)) throw err;
    ensureDir(parent);
    fs.mkdirSync(dir);
  }
}

function keepBackup(file: string): void {
  const bakTmp = `${file}.bak.tmp`;
  fs.rmSync(bakTmp, { force: true });
  try {
    fs.linkSync(file, bakTmp);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return; // first write: nothing to keep
    // a file system without hard links: a copy does the same
    fs.copyFileSync(file, bakTmp);
  }
  fs.renameSync(bakTmp, `${file}.bak`);
}

/**
 * Load one of the broker's config files the way Java's ConfigManager.load does, and safer:
 * `file` first, `<file>.bak` when `file` is missing, empty or does not decode. When `file` could
 * not be read but the .bak could, `file` is moved aside to `<file>.unreadable[.N]` (Java deletes
 * it) and `warn` says so. When neither can be read, throws ConfigFileError: the caller must not
 * start, since starting empty would overwrite the file at the next flush. Returns null when neither
 * file exists (a new store).
 */
export function loadConfigFile<T>(file: string, decode: (text: string) => T, warn: StoreWarn): T | null {
  const main = tryLoad(file, decode);
  if (main.ok) return main.value;
  const bak = tryLoad(`${file}.bak`, decode);
  if (main.reason === null) {
    // no file: a new store, or a crash after Java's persist moved it to .bak
    if (bak.ok) {
      warn(`${file} is missing; loaded its backup ${file}.bak`);
      return bak.value;
    }
    if (bak.reason === null) return null;
    throw new ConfigFileError(file, `missing, and the .bak: ${bak.reason}`);
  }
  if (!bak.ok) throw new ConfigFileError(file, main.reason);
  const aside = freeName(`${file}.unreadable`);
  fs.renameSync(file, aside);
  warn(
    `${file} cannot be read (${main.reason}); loaded its backup ${file}.bak (up to one flush older) and moved the unreadable file to ${aside}`,
  );
  return bak.value;
}

type Loaded<T> = { ok: true; value: T } | { ok: false; reason: string | null };

/** reason null: the file does not exist. */
function tryLoad<T>(file: string, decode: (text: string) => T): Loaded<T> {
  let text: string | null;
  try {
    text = readTextFile(file);
  } catch (err) {
    return { ok: false, reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
  }
  if (text === null) return { ok: false, reason: null };
  if (text.trim() === '') return { ok: false, reason: 'the file is empty' };
  try {
    return { ok: true, value: decode(text) };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

function freeName(base: string): string {
  if (!fs.existsSync(base)) return base;
  for (let i = 1; ; i++) if (!fs.existsSync(`${base}.${i}`)) return `${base}.${i}`;
}

/**
 * The path `root/parts…`, after checking that it stays under `root` whatever the parts hold (a
 * topic, group or queue id from the wire): each part must be a plain file name, not empty, `.`,
 * `..`, or anything with a separator or NUL. Throws StorePathError otherwise. The request
 * processors validate names first; this is the store's own line of defence.
 */
export function storePath(root: string, ...parts: string[]): string {
  for (const part of parts) {
    if (part === '' || part === '.' || part === '..' || /[/\\\0]/.test(part)) throw new StorePathError(root, part);
  }
  const full = path.join(root, ...parts);
  const rel = path.relative(path.resolve(root), path.resolve(full));
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) throw new StorePathError(root, parts.join('/'));
  return full;
}
