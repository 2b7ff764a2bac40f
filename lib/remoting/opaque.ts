// Request ids: one counter for the process, like Java's RemotingCommand.requestId, kept within
// 0..2^31-1 so that it stays a positive int32 on the wire.
let opaqueCounter = 0;
export function nextOpaque(): number {
  opaqueCounter = opaqueCounter >= 0x7fffffff ? 1 : opaqueCounter + 1;
  return opaqueCounter;
}
/** For tests: set the process-wide opaque counter (the next opaque is `value + 1`, wrapping at 2^31). */
export function setOpaqueCounterForTest(value: number): void {
  opaqueCounter = value;
}
