/** A one-line progress bar on a TTY stream, redrawn at most every 100 ms; silent elsewhere. */
export class ProgressBar {
  private last = 0;
  private active = false;
  constructor(private readonly stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }) {}

  get enabled(): boolean {
    return this.stream.isTTY === true;
  }

  update(label: string, done: number, total: number, extra = ''): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.last < 100 && done < total) return;
    this.last = now;
    const cols = Math.max(40, (this.stream.columns ?? 80) - 1);
    const frac = total > 0 ? Math.min(1, done / total) : 0;
    const text = ` ${label} ${(frac * 100).toFixed(0).padStart(3)}% ${done}/${total} ${extra}`;
    const barWidth = Math.max(10, cols - text.length - 2);
    const filled = Math.round(barWidth * frac);
    this.stream.write(`\r[${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}]${text}`.slice(0, cols));
    this.active = true;
  }

  clear(): void {
    if (this.enabled && this.active) this.stream.write('\r\x1b[K');
    this.active = false;
  }
}
