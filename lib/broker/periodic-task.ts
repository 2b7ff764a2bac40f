import type { Clock, ClockTimer } from '../clock.js';

/**
 * Run `fn` every `intervalMs` on `clock` until the returned function is called (Java's
 * scheduleAtFixedDelay). A throw is handed to `onError` and does not stop the task.
 */
export function scheduleEvery(
  clock: Clock,
  intervalMs: number,
  fn: () => void,
  onError: (err: unknown) => void,
): () => void {
  let timer: ClockTimer | null = null;
  let cancelled = false;
  const tick = (): void => {
    if (cancelled) return;
    try {
      fn();
    } catch (err) {
      onError(err);
    }
    if (!cancelled) timer = clock.setTimeout(tick, intervalMs);
  };
  timer = clock.setTimeout(tick, intervalMs);
  return () => {
    cancelled = true;
    if (timer) clock.clearTimeout(timer);
  };
}
