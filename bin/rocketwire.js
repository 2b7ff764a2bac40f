#!/usr/bin/env node
// Entry point of the `rocketwire` command. The TypeScript sources are compiled to dist/ before
// packing (the prepack script); in a clone by `npm run build` (npm test and npm run bench build first).
import { main } from '../dist/lib/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = 1;
  },
);
