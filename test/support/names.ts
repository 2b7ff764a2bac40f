let seq = 0;
/** A fresh name per test so groups, topics and instances never collide between tests of one file or run. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now() % 100000}_${seq++}`;
}
