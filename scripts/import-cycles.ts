/**
 * Fails on an import cycle: `npx tsx scripts/import-cycles.ts [dir…]` (run by `npm run lint`,
 * default src bench scripts test). A cycle makes load order decide what a module sees (an
 * import still undefined when it is used) and ties together modules that should change apart.
 *
 * Type-only imports count too: they vanish at run time, but a module that needs a type from a
 * module that imports it is as tangled as one that needs a value (the usual fix is the same:
 * move what both need to a third module). ESLint's import plugins skip them, hence this check.
 * Imports are read with TypeScript's own pre-processor and resolved with the project's
 * compiler options; packages are not followed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/** Each cycle as the files along it, the first repeated at the end (paths relative to `cwd`). */
export function findImportCycles(roots: string[], opts: ImportGraphOptions = {}): string[][] {
  const cwd = opts.cwd ?? process.cwd();
  const graph = importGraph(roots, opts);
  return stronglyConnected(graph)
    .filter((component) => component.length > 1)
    .map((component) => cycleWithin(graph, component).map((f) => path.relative(cwd, f)))
    .sort((a, b) => a[0]!.localeCompare(b[0]!));
}

export interface ImportGraphOptions {
  cwd?: string;
  compilerOptions?: ts.CompilerOptions;
}

/**
 * Every source file under `roots` and the project files it imports (absolute paths, type-only
 * imports included, packages not followed). Also read by scripts/layers.ts.
 */
export function importGraph(roots: string[], opts: ImportGraphOptions = {}): Map<string, string[]> {
  const cwd = opts.cwd ?? process.cwd();
  const compilerOptions = opts.compilerOptions ?? projectOptions(cwd);
  const files = roots.flatMap((r) => sourceFiles(path.resolve(cwd, r)));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const deps = new Set<string>();
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      const resolved = ts.resolveModuleName(ref.fileName, file, compilerOptions, ts.sys).resolvedModule;
      if (!resolved || resolved.isExternalLibraryImport) continue;
      const target = path.resolve(resolved.resolvedFileName);
      if (target !== file) deps.add(target);
    }
    graph.set(file, [...deps].sort());
  }
  return graph;
}

function projectOptions(cwd: string): ts.CompilerOptions {
  const configPath = ts.findConfigFile(cwd, ts.sys.fileExists);
  if (!configPath) return { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 };
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config.config, ts.sys, path.dirname(configPath)).options;
}

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) throw new Error(`import-cycles: no such directory: ${dir}`);
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) out.push(...sourceFiles(p));
    } else if (/\.(ts|tsx|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.push(p);
    }
  }
  return out.sort();
}

/** Tarjan's strongly connected components, iteratively (deep import chains must not overflow the stack). */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component.sort());
      }
    }
  }
  return components;
}

/** A shortest cycle through the component's first file (breadth-first inside the component). */
function cycleWithin(graph: Map<string, string[]>, component: string[]): string[] {
  const inside = new Set(component);
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!inside.has(to)) continue;
      if (to === start) {
        const cycle: string[] = [];
        for (let at = node; at !== start; at = previous.get(at)!) cycle.push(at);
        return [start, ...cycle.reverse(), start];
      }
      if (!previous.has(to) && to !== start) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [...component, start];
}

if (require.main === module) {
  const roots = process.argv.slice(2);
  const cycles = findImportCycles(roots.length > 0 ? roots : ['src', 'bench', 'scripts', 'test']);
  for (const cycle of cycles) process.stderr.write(`import cycle: ${cycle.join(' → ')}\n`);
  if (cycles.length > 0) {
    process.stderr.write(`${cycles.length} import cycle(s): move what the modules share into a module both import\n`);
    process.exitCode = 1;
  }
}
