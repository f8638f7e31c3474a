/**
 * Fails on an import that points up a layer: `npx tsx scripts/layers.ts` (run by `npm run lint`).
 * Each folder of src/ may import only the folders listed for it below, which are all below it
 * (ARCHITECTURE.md#layers); a folder not listed is refused until it is placed. Inside
 * src/workflows/ each workflow type has its own folder and none imports another's. Nothing in
 * src/ imports tests, benchmarks or scripts.
 */
import * as path from 'node:path';
import { importGraph, type ImportGraphOptions } from './import-cycles';

/** What each folder of src/ may import besides itself, bottom layer first. `.` is src/index.ts, the package's entry. */
export const LAYERS: Readonly<Record<string, readonly string[]>> = {
  shared: [],
  codec: ['shared'],
  workflows: ['shared'],
  activities: ['shared'],
  server: ['shared'],
  client: ['shared', 'codec', 'server', 'activities'],
  worker: ['shared', 'codec', 'server', 'activities', 'workflows'],
  sdk: ['shared', 'codec', 'server', 'activities', 'client'],
  ui: ['shared', 'codec', 'server', 'activities', 'client'],
  testing: ['shared', 'codec', 'server', 'activities', 'client', 'worker'],
  cli: ['shared', 'codec', 'server', 'activities', 'client', 'worker', 'sdk', 'ui', 'testing'],
  '.': ['shared', 'codec', 'server', 'activities', 'client', 'worker', 'sdk', 'ui', 'testing'],
};

/** The folders under src/workflows/ that hold one workflow type each: they import none of each other. */
export const WORKFLOW_TYPES: readonly string[] = ['session', 'batch', 'rate-limit', 'list-models'];

/** Where a file sits: its folder under src/ (`.` for a file at the top), and under workflows/ its type folder. */
function place(srcDir: string, file: string): { layer: string; workflowType?: string } | undefined {
  const rel = path.relative(srcDir, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const parts = rel.split(path.sep);
  const layer = parts.length === 1 ? '.' : parts[0]!;
  return layer === 'workflows' && parts.length > 2 ? { layer, workflowType: parts[1]! } : { layer };
}

/** Each import that breaks the layering, as `from → to: why` (paths relative to `cwd`). */
export function findLayerViolations(
  opts: ImportGraphOptions & { layers?: Record<string, readonly string[]>; workflowTypes?: readonly string[] } = {},
): string[] {
  const cwd = opts.cwd ?? process.cwd();
  const layers = opts.layers ?? LAYERS;
  const types = new Set(opts.workflowTypes ?? WORKFLOW_TYPES);
  const srcDir = path.resolve(cwd, 'src');
  const out: string[] = [];
  const rel = (f: string) => path.relative(cwd, f);
  for (const [file, deps] of importGraph(['src'], opts)) {
    const from = place(srcDir, file)!;
    const allowed = layers[from.layer];
    if (from.layer === 'workflows' && from.workflowType && !types.has(from.workflowType)) {
      out.push(`${rel(file)}: src/workflows/${from.workflowType}/ is not a known workflow type (scripts/layers.ts WORKFLOW_TYPES)`);
    }
    for (const dep of deps) {
      const to = place(srcDir, dep);
      const edge = `${rel(file)} → ${rel(dep)}`;
      if (!to) {
        out.push(`${edge}: src/ imports nothing outside src/`);
        continue;
      }
      if (!allowed) {
        out.push(`${edge}: src/${from.layer}/ has no place in the layers (scripts/layers.ts LAYERS)`);
        continue;
      }
      if (to.layer !== from.layer && !allowed.includes(to.layer)) {
        out.push(
          `${edge}: ${from.layer === '.' ? 'src/index.ts' : `src/${from.layer}/`} may import only ${allowed.map((l) => `src/${l}/`).join(', ') || 'itself'}`,
        );
        continue;
      }
      if (
        from.layer === 'workflows' &&
        to.layer === 'workflows' &&
        from.workflowType &&
        to.workflowType &&
        from.workflowType !== to.workflowType
      ) {
        out.push(`${edge}: one workflow type's folder imports none of another's (what both need goes in src/shared/)`);
      }
    }
  }
  return out.sort();
}

if (require.main === module) {
  const violations = findLayerViolations();
  for (const v of violations) process.stderr.write(`layering: ${v}\n`);
  if (violations.length > 0) {
    process.stderr.write(`${violations.length} import(s) against the layers: see ARCHITECTURE.md#layers\n`);
    process.exitCode = 1;
  }
}
