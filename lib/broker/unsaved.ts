/**
 * Whether a persisted table (consumer offsets, POP checkpoints, order infos) holds changes not yet
 * written, and whom to tell when it starts to: its owner's persist task, which keeps a timer only
 * while there is something to write (periodic-task.ts).
 */
export class Unsaved {
  private pending = false;
  /** Told at every change (the owner wakes its persist task). */
  onChange: (() => void) | null = null;

  /** Changes are waiting to be written. */
  get value(): boolean {
    return this.pending;
  }

  /** The table changed. */
  mark(): void {
    this.pending = true;
    this.onChange?.();
  }

  /** The table was written. */
  clear(): void {
    this.pending = false;
  }
}
