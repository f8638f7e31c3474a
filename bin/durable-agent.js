#!/usr/bin/env node
// Installed from npm: runs the compiled CLI in dist/. In a checkout of the repository (src/ is
// here and tsx is installed) it runs the TypeScript sources through tsx instead, so a dist/ left
// over from an earlier `npm run build` is never what a developer or the tests run.
const fs = require('node:fs');
const path = require('node:path');

function checkout() {
  if (!fs.existsSync(path.join(__dirname, '..', 'src', 'cli', 'main.ts'))) return false;
  try {
    require.resolve('tsx/cjs');
    return true;
  } catch {
    return false;
  }
}

let cli;
if (checkout()) {
  require('tsx/cjs');
  cli = require('../src/cli/main.ts');
} else {
  cli = require('../dist/cli/main.js');
}
cli.main(process.argv.slice(2)).then(cli.exitAfterOutput);
