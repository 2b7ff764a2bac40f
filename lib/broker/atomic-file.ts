import * as fs from 'node:fs';
import * as path from 'node:path';

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
