import { join } from 'node:path';
import { repoRoot } from '../interop/harness.js';

/** Java 5.3.3 TraceDataEncoder's output on fixed contexts (TraceClient encode), one JSON line each. */
export const TRACE_VECTORS_FILE = join(repoRoot(), 'test', 'fixtures', 'trace', 'trace-vectors-5.3.3.jsonl');
