import * as fs from 'node:fs';
import * as path from 'node:path';
import { NotAFolderError } from './errors.js';

/**
 * Replace `file` with `data` so that a crash leaves either the old or the new content: write a
 * temp file beside it, fsync it (when `sync`), rename over the target, fsync the folder.
 */
export function writeFileAtomic(file: string, data: string | Buffer, sync = true): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    if (sync) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
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
