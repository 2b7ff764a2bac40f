// The `debug` package's createDebug, loaded on first use. Every module of lib/ makes its loggers at
// import time (`const log = createDebug('rocketwire:…')`); importing `debug` itself there cost about
// 10 ms of CPU of `import 'rocketwire'` (a CommonJS package imported from ES modules, with its
// dependencies; bench/import-cost measures it). Here a logger requires `debug` on its first call or first
// `enabled` check, which in practice is when a client starts. Behaviour is `debug`'s own: the same
// module instance (so `createDebug.enable()`, `createDebug.log` and DEBUG work as before), the same
// namespaces; only the moment `debug` reads DEBUG moves from the import to the first log call.
//
// The types are declared here rather than taken from @types/debug, a devDependency: no published
// declaration may need it (test/api/fresh-project.test.ts).
import { createRequire } from 'node:module';

/** A `debug` logger, as much of one as lib/ uses. */
export interface Debugger {
  (formatter: unknown, ...args: unknown[]): void;
  /** Whether the namespace is enabled (DEBUG or createDebug.enable()). */
  readonly enabled: boolean;
  readonly namespace: string;
}

interface DebugModule {
  (namespace: string): Debugger;
  enabled(namespace: string): boolean;
}

let debugModule: DebugModule | undefined;

function load(): DebugModule {
  return (debugModule ??= createRequire(import.meta.url)('debug') as DebugModule);
}

/** `debug(namespace)`, creating the real logger on first use. */
function createDebug(namespace: string): Debugger {
  let real: Debugger | undefined;
  const get = (): Debugger => (real ??= load()(namespace));
  // `arguments` rather than a rest parameter: a disabled logger on a hot path allocates nothing.
  const log = function (this: unknown): void {
    const d = get();
    // biome-ignore lint/complexity/noArguments: a rest parameter would allocate an array on every call, logged or not
    if (d.enabled) d.apply(this, arguments as unknown as [unknown, ...unknown[]]);
  } as unknown as Debugger;
  Object.defineProperties(log, {
    enabled: { get: () => get().enabled },
    namespace: { value: namespace },
  });
  return log;
}

/** Whether `namespace` is enabled, as `debug.enabled(namespace)`. */
createDebug.enabled = (namespace: string): boolean => load().enabled(namespace);

export default createDebug;
