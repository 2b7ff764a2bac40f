import { open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CaptureStateError } from '../errors.js';

/**
 * The report's file, written atomically: a temporary file beside it is opened before decoding
 * starts (so a path that cannot be written fails at once, not after a long decode), and renamed
 * over the target once the report is complete and synced. A reader never sees half a report.
 * Errors are Node's own (ENOENT, EACCES, EISDIR…), for the caller to word.
 */
export class ReportFile {
  private constructor(
    readonly path: string,
    private readonly tmp: string,
    private handle: FileHandle | null,
  ) {}

  static async open(path: string): Promise<ReportFile> {
    // A directory would only fail at the rename, after the whole decode.
    if ((await stat(path).catch(() => null))?.isDirectory())
      throw Object.assign(new Error(`${path} is a directory`), { code: 'EISDIR' });
    const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
    return new ReportFile(path, tmp, await open(tmp, 'w', 0o644));
  }

  async commit(html: string): Promise<void> {
    const h = this.handle;
    if (!h) throw new CaptureStateError('report file already closed');
    this.handle = null;
    try {
      try {
        await h.writeFile(html, 'utf8');
        await h.sync();
      } finally {
        await h.close();
      }
      await rename(this.tmp, this.path);
    } catch (err) {
      await unlink(this.tmp).catch(() => {});
      throw err;
    }
  }

  /** Remove the temporary file (decoding failed before the report was complete). */
  async discard(): Promise<void> {
    const h = this.handle;
    if (!h) return;
    this.handle = null;
    await h.close().catch(() => {});
    await unlink(this.tmp).catch(() => {});
  }
}
