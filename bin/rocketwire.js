#!/usr/bin/env node
// Entry point of the `rocketwire` command. The TypeScript sources are compiled to dist/ by
// `npm ci` (the package's prepare script) or `npm run build`.
import { main } from '../dist/lib/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = 1;
  },
);
