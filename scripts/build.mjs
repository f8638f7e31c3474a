// `npm run build`: compile src/ to dist/ (CommonJS, .d.ts, source maps), then write the ESM entry.
// The ESM entry is a thin wrapper over the CommonJS build, so both `import` and `require` get one
// and the same module instance (one set of classes for instanceof checks, one Temporal runtime).
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const built = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

// The dashboard's page (plain files, no build step of their own) ships beside its server.
cpSync(path.join(root, 'src', 'ui', 'assets'), path.join(dist, 'ui', 'assets'), { recursive: true });

const names = Object.keys(createRequire(import.meta.url)(path.join(dist, 'index.js'))).filter((n) => n !== '__esModule');
writeFileSync(
  path.join(dist, 'index.mjs'),
  `// ESM entry: the CommonJS build's exports (written by scripts/build.mjs).\nimport cjs from './index.js';\n\nexport const { ${names.join(', ')} } = cjs;\n`,
);
writeFileSync(path.join(dist, 'index.d.mts'), `export * from './index.js';\n`);
console.log(`dist/: CommonJS + ESM entry (${names.length} exports)`);
