/** The one list of compatibility branches (src/shared/compat.ts) is the whole list, and each entry is still in use. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { OLDER_PEERS, PATCHES, SCHEMA_VERSIONS } from '../../src/shared/compat';
import { migrateCarriedState, STATE_SCHEMA_VERSION, type CarriedState } from '../../src/workflows/session/state';

const ROOT = path.join(__dirname, '..', '..');
const sources = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => path.join('src', f));
const code = new Map(sources.map((f) => [f, readFileSync(path.join(ROOT, f), 'utf8')]));

test('every patched() and deprecatePatch() names an entry of PATCHES, never a bare id', () => {
  const calls = [...code]
    .filter(([file]) => file !== 'src/shared/compat.ts') // its own comment names the calls
    .flatMap(([file, text]) => [...text.matchAll(/\b(?:patched|deprecatePatch)\(([^)]*)\)/g)].map((m) => ({ file, arg: m[1]!.trim() })));
  expect(calls.length).toBeGreaterThanOrEqual(Object.keys(PATCHES).length);
  const bad = calls.filter(({ arg }) => {
    const key = /^PATCHES\.(\w+)\.id$/.exec(arg)?.[1];
    return arg !== '' && (key === undefined || !(key in PATCHES));
  });
  // (An empty argument is `patched()` named in a comment.)
  expect(bad).toEqual([]);
});

test('each patch is used where the list says, and its id is unique', () => {
  for (const [key, p] of Object.entries(PATCHES)) {
    expect({ key, usedWhereListed: code.get(p.where)?.includes(`PATCHES.${key}.id`) ?? false }).toEqual({ key, usedWhereListed: true });
  }
  const ids = Object.values(PATCHES).map((p) => p.id);
  expect(new Set(ids).size).toBe(ids.length);
});

test('the branches kept for older peers and schemas name files that exist, and what deletes them', () => {
  for (const b of [...OLDER_PEERS, ...Object.values(SCHEMA_VERSIONS)]) {
    const file = /src\/[\w/.-]+\.ts/.exec(b.where)?.[0];
    expect({ where: b.where, exists: file !== undefined && existsSync(path.join(ROOT, file)) }).toEqual({ where: b.where, exists: true });
    expect(b.deleteWhen.length).toBeGreaterThan(10);
  }
});

test('the carried session state reads every version the list says, and refuses a newer one by name', () => {
  expect(STATE_SCHEMA_VERSION).toBe(SCHEMA_VERSIONS.carriedSessionState.current);
  const carried = (schemaVersion: number) =>
    ({ state: { schemaVersion, userTurns: 1, awaitingInput: true }, events: [] }) as unknown as CarriedState;
  for (const v of SCHEMA_VERSIONS.carriedSessionState.reads) {
    expect((migrateCarriedState(carried(v)).state as { schemaVersion: number }).schemaVersion).toBe(STATE_SCHEMA_VERSION);
  }
  expect(() => migrateCarriedState(carried(STATE_SCHEMA_VERSION + 1))).toThrow(`it reads 1..${STATE_SCHEMA_VERSION}`);
});
