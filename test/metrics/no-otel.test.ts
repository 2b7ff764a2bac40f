// @opentelemetry/api is an optional peer dependency: with it missing (hidden by a resolve hook in a
// child process), clients start, send and consume as usual, nothing throws, and no metrics object
// is built; a client that asked for `tracing` refuses to start, naming the option.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');

t.test('without @opentelemetry/api the clients work and record nothing', async (t) => {
  const hooks = pathToFileURL(path.join(root, 'test/metrics/fixtures/hide-otel-hooks.mjs')).href;
  const register = `data:text/javascript,import{register}from'node:module';register(${JSON.stringify(hooks)});`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', register, path.join(here, 'fixtures/no-otel-child.js')],
    { timeout: 60_000 },
  );
  const out = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
  t.same(out, {
    hidden: true,
    consumed: 2,
    consumerMetrics: null,
    producerMetrics: null,
    tracingRefused: 'ProducerOptionError tracing',
  });
});
