/** Small source trees for the lint scripts' tests (import cycles, layers), written to a temp dir. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';

/** What the trees are resolved with: CommonJS, Node's resolution, no tsconfig needed. */
export const treeCompilerOptions = { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 };

/** Writes `files` (relative path → text) under a new temp dir and returns the dir. */
export function sourceTree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'da-tree-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}
