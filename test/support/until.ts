/**
 * The one way a test waits for a condition: poll it every few milliseconds until it holds, and
 * fail with the condition's name when a deadline passes. A condition is a state the code under
 * test reaches (a counter, a broker-side record, a log line), never a length of time.
 */

/** What `until` waits for, named in its timeout error; a function when the name should show the latest state. */
export type What = string | (() => string);

const DEFAULT_LIMIT_MS = 10_000;
const DEFAULT_INTERVAL_MS = 10;

/**
 * Resolves once `cond` holds (checked at once, then every `intervalMs`); rejects with
 * `timed out waiting for <what>` when it still does not after `limitMs`. `limitMs` may be
 * Infinity when tap's own timeout is the deadline.
 */
export async function until(
  cond: () => boolean | Promise<boolean>,
  what: What,
  limitMs = DEFAULT_LIMIT_MS,
  intervalMs = DEFAULT_INTERVAL_MS,
): Promise<void> {
  if (await waitFor(cond, limitMs, intervalMs)) return;
  throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
}

/**
 * The same wait, answering whether `cond` held by the deadline instead of rejecting: for a test
 * that asserts the outcome itself (`t.ok(await waitFor(...), '...')`).
 */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  limitMs = DEFAULT_LIMIT_MS,
  intervalMs = DEFAULT_INTERVAL_MS,
): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Retries `fn` until it resolves, and resolves with its value; rejects with its last error when it
 * still throws after `limitMs` (for a call that fails until a server is back).
 */
export async function eventually<T>(
  fn: () => Promise<T>,
  limitMs = 3000,
  intervalMs = DEFAULT_INTERVAL_MS,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/**
 * `until` as an assertion: passes `what` on `t` once `cond` holds. No deadline of its own: tap's
 * timeout bounds it, for states the code reaches however long a loaded machine takes.
 */
export async function passWhen(
  t: { pass(message: string): unknown },
  cond: () => boolean,
  what: string,
): Promise<void> {
  await until(cond, what, Infinity);
  t.pass(what);
}
