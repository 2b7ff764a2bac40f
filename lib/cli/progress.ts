/** How often the line is redrawn: often enough to look live, rarely enough to cost nothing. */
export const PROGRESS_INTERVAL_MS = 250;

/** What the line needs of stderr: a terminal has isTTY and, usually, columns. */
type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/**
 * A live status line on stderr for `produce` and `consume`, only when stderr is a terminal and the
 * output is not JSON: a pipe, a log file or a program reading --json gets nothing extra. The line is
 * redrawn in place (`\r`, then erase to the end of the line) every PROGRESS_INTERVAL_MS, cut to the
 * terminal's width (a wrapped line cannot be overwritten), and erased before anything else is
 * written to the terminal and when the command ends, so no trace of it is left in the scrollback.
 */
export class ProgressLine {
  private timer: NodeJS.Timeout | null = null;
  private shown = false;
  private lastCount = 0;
  private lastAt: number;
  private rate = 0;
  private readonly startedAt: number;

  private constructor(
    private readonly err: ProgressStream,
    private readonly render: (rate: number, elapsedMs: number) => string,
    private readonly count: () => number,
    private readonly now: () => number,
  ) {
    this.startedAt = now();
    this.lastAt = this.startedAt;
  }

  /**
   * Starts the line, or returns null when it is not wanted (stderr not a terminal, or `json`).
   * `count` is what the rate is of; `render` gets that rate (per second, over the last interval)
   * and the time since the start.
   */
  static start(
    err: NodeJS.WritableStream,
    json: boolean,
    count: () => number,
    render: (rate: number, elapsedMs: number) => string,
    now: () => number = Date.now,
  ): ProgressLine | null {
    const stream = err as ProgressStream;
    if (json || stream.isTTY !== true) return null;
    const line = new ProgressLine(stream, render, count, now);
    line.timer = setInterval(() => line.draw(), PROGRESS_INTERVAL_MS);
    // The line must never be what keeps a finished command alive.
    line.timer.unref();
    return line;
  }

  /** Redraws the line now (the timer calls this; tests may too). */
  draw(): void {
    const t = this.now();
    const n = this.count();
    if (t > this.lastAt) this.rate = ((n - this.lastCount) * 1000) / (t - this.lastAt);
    this.lastCount = n;
    this.lastAt = t;
    let text = this.render(Math.round(this.rate), t - this.startedAt);
    const width = this.err.columns ?? 80;
    if (text.length > width - 1) text = text.slice(0, Math.max(0, width - 1));
    this.err.write(`\r${text}\x1b[K`);
    this.shown = true;
  }

  /** Erases the line if it is on screen (before other output; the next tick draws it again). */
  clear(): void {
    if (!this.shown) return;
    this.err.write('\r\x1b[K');
    this.shown = false;
  }

  /** Stops redrawing and erases the line. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.clear();
  }
}

/** "1.2 s", "3 min 4 s": how long a command has been running, for the progress line. */
export function elapsedText(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.floor(s % 60)} s`;
}

/** `consume`'s progress line: messages printed (of --limit), the rate, the time. */
export function consumeProgress(
  err: NodeJS.WritableStream,
  json: boolean,
  limit: number,
  printed: () => number,
): ProgressLine | null {
  return ProgressLine.start(
    err,
    json,
    printed,
    (rate, ms) => `consumed ${printed()}${limit > 0 ? ` of ${limit}` : ''}, ${rate} msgs/s, ${elapsedText(ms)}`,
  );
}

/**
 * The summary `consume` prints on stderr when Ctrl-C stops it (stdout carries the messages, and
 * with --json nothing but them), as `produce` prints its own.
 */
export function consumeInterrupted(printed: number, topic: string, elapsedMs: number): string {
  const secs = Math.max(elapsedMs, 1) / 1000;
  return `rocketwire consume: interrupted after ${printed} message${printed === 1 ? '' : 's'} from ${topic} in ${secs.toFixed(3)} s (${Math.round(printed / secs)} msgs/s)\n`;
}

/**
 * A stream that erases the progress line before each write: the consumers' broker lines go to the
 * same terminal as the line, and would otherwise be written over it.
 */
export function clearingWrites(err: NodeJS.WritableStream, progress: () => ProgressLine | null): NodeJS.WritableStream {
  return {
    write: (chunk: string | Uint8Array) => {
      progress()?.clear();
      return err.write(chunk);
    },
  } as unknown as NodeJS.WritableStream;
}
