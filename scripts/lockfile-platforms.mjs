// The package registry this project is built against serves only the linux-x64 builds of
// native packages, so `npm install` leaves the other platforms' optional packages out of
// package-lock.json and `npm ci` then refuses the lock ("Missing: @swc/core-darwin-arm64").
// This adds each missing optional platform package as an optional lock entry (npm skips it
// where its os/cpu do not match, and fetches it normally on a machine that needs it).
// Run after `npm install` changes the lock: node scripts/lockfile-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const pkgs = lock.packages;
const osCpu = (name) => {
  const os = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openharmony', 'sunos', 'netbsd', 'openbsd', 'aix'].find((o) =>
    name.includes(o),
  );
  const cpu = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'wasm32'].find((c) =>
    new RegExp(`-${c}(-|$)`).test(name),
  );
  const libc = /-musl/.test(name) ? 'musl' : /-gnu/.test(name) ? 'glibc' : undefined;
  return { ...(os ? { os: [os] } : {}), ...(cpu ? { cpu: [cpu] } : {}), ...(libc ? { libc: [libc] } : {}) };
};
let added = 0;
for (const [path, meta] of Object.entries(pkgs)) {
  for (const [dep, range] of Object.entries(meta.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    const nested = `${path ? `${path}/` : ''}node_modules/${dep}`;
    if (pkgs[key] || pkgs[nested]) continue;
    pkgs[key] = { version: range.replace(/^[\^~=]/, ''), dev: meta.dev || undefined, optional: true, ...osCpu(dep) };
    added++;
  }
}
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} optional platform entries to package-lock.json`);
