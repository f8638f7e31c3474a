#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx (a dependency), so there is no build step.
require('tsx/cjs');
require('../src/client/cli.ts')
  .main(process.argv.slice(2))
  .then((code) => process.exit(code));
