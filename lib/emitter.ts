/**
 * The one event emitter of lib/: consumers, the producer, remoting connections, servers and clients,
 * and the client instance emit through it. Typed by an event map (`{ send: [event: SendEvent] }`),
 * `on()` returns the function that removes the listener, and `listening(event)` is one map look-up,
 * so that an emitter builds no payload for an event nobody listens to.
 *
 * It keeps what users of Node's EventEmitter could notice: listeners run synchronously in the order
 * they were added; one added twice runs twice and `off` removes its last registration; a listener
 * added or removed while an event is being emitted takes effect from the next emit; a `once`
 * listener is removed before it runs; a listener that throws stops the emit and the error reaches
 * the emitter's caller, unless the emitter was made with `isolate`, which takes every listener's
 * error and lets the others run (the remoting client's observers are isolated so: an application's
 * listener is not the client's concern). There is no special `'error'` event: no event of lib/ is one.
 */

import { once as nodeOnce, type EventEmitter } from 'node:events';

/** An event map: each event's name and the arguments its listeners take. */
export type EventMap<M> = { [E in keyof M]: unknown[] };

/** A listener of `E` in the event map `M`. */
export type Listener<M extends EventMap<M>, E extends keyof M> = (...args: M[E]) => void;

/** How an emitter is made. */
export interface EmitterOptions<M> {
  /** Called after every `on` / `once`, e.g. to start observing a source only once someone listens. */
  onListen?: (event: keyof M) => void;
  /** When given, each listener's throw is handed here and the other listeners still run. */
  isolate?: (error: unknown, event: keyof M) => void;
}

type AnyListener = (...args: unknown[]) => void;

/** A once-listener, marked with what it wraps so that `off(event, listener)` finds it. */
interface OnceWrapper extends AnyListener {
  listener: AnyListener;
}

export class TypedEmitter<M extends EventMap<M>> {
  // Arrays are replaced, never changed in place, so that emit iterates a snapshot for free.
  readonly #listeners = new Map<keyof M, readonly AnyListener[]>();
  readonly #onListen: ((event: keyof M) => void) | undefined;
  readonly #isolate: ((error: unknown, event: keyof M) => void) | undefined;

  constructor(options: EmitterOptions<M> = {}) {
    this.#onListen = options.onListen;
    this.#isolate = options.isolate;
  }

  /** Adds `listener` for `event`; returns the function that removes it. */
  on<E extends keyof M>(event: E, listener: Listener<M, E>): () => void {
    this.#add(event, listener as AnyListener);
    return () => this.off(event, listener);
  }

  /** Adds `listener` for the next `event` only; returns the function that removes it before then. */
  once<E extends keyof M>(event: E, listener: Listener<M, E>): () => void {
    const wrapper = ((...args: unknown[]) => {
      this.#remove(event, wrapper);
      (listener as AnyListener)(...args);
    }) as OnceWrapper;
    wrapper.listener = listener as AnyListener;
    this.#add(event, wrapper);
    return () => this.#remove(event, wrapper);
  }

  /** Removes the last registration of `listener` for `event` (by `on` or `once`); nothing when there is none. */
  off<E extends keyof M>(event: E, listener: Listener<M, E>): void {
    const list = this.#listeners.get(event);
    if (!list) return;
    for (let i = list.length - 1; i >= 0; i--) {
      const l = list[i] as AnyListener;
      if (l === listener || (l as Partial<OnceWrapper>).listener === listener) {
        this.#removeAt(event, list, i);
        return;
      }
    }
  }

  /** Whether someone listens to `event`: check it before building the event's payload. */
  listening(event: keyof M): boolean {
    return this.#listeners.has(event);
  }

  /** How many listeners `event` has. */
  listenerCount(event: keyof M): number {
    return this.#listeners.get(event)?.length ?? 0;
  }

  /** Calls the listeners of `event` in order; returns whether there were any. */
  emit<E extends keyof M>(event: E, ...args: M[E]): boolean {
    const list = this.#listeners.get(event);
    if (!list) return false;
    const isolate = this.#isolate;
    for (const l of list) {
      if (isolate === undefined) l(...args);
      else {
        try {
          l(...args);
        } catch (err) {
          isolate(err, event);
        }
      }
    }
    return true;
  }

  /** Removes every listener (of `event`, or of all events). */
  removeAllListeners(event?: keyof M): void {
    if (event === undefined) this.#listeners.clear();
    else this.#listeners.delete(event);
  }

  #add(event: keyof M, listener: AnyListener): void {
    const list = this.#listeners.get(event);
    this.#listeners.set(event, list ? [...list, listener] : [listener]);
    this.#onListen?.(event);
  }

  #remove(event: keyof M, listener: AnyListener): void {
    const list = this.#listeners.get(event);
    const i = list ? list.lastIndexOf(listener) : -1;
    if (list && i >= 0) this.#removeAt(event, list, i);
  }

  #removeAt(event: keyof M, list: readonly AnyListener[], i: number): void {
    if (list.length === 1) this.#listeners.delete(event);
    else this.#listeners.set(event, [...list.slice(0, i), ...list.slice(i + 1)]);
  }
}

/**
 * The arguments of `emitter`'s next `event`, as Node's `events.once` gives them for an EventEmitter
 * (to which any other emitter is handed, with its `'error'` rejection).
 */
export function once<M extends EventMap<M>, E extends keyof M>(emitter: TypedEmitter<M>, event: E): Promise<M[E]>;
export function once(emitter: EventEmitter, event: string | symbol): Promise<unknown[]>;
export function once(emitter: object, event: string | number | symbol): Promise<unknown[]> {
  if (!(emitter instanceof TypedEmitter)) return nodeOnce(emitter as EventEmitter, event as string | symbol);
  const typed = emitter as unknown as TypedEmitter<Record<string | symbol, unknown[]>>;
  return new Promise((resolve) => typed.once(event as string, (...args) => resolve(args)));
}
