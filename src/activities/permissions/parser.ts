/**
 * tree-sitter-bash through web-tree-sitter (WebAssembly: no native build, the same on every
 * platform), loaded once per worker process (ARCHITECTURE.md#bash-rules-on-a-real-parse).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';
import type { BashAnalysis } from '../../shared/permissions/bash-analysis';
import { BashAnalyser } from './bash-analyse';

let loading: Promise<Parser> | undefined;

function bashParser(): Promise<Parser> {
  return (loading ??= (async () => {
    await Parser.init();
    const wasm = createRequire(__filename).resolve('tree-sitter-bash/tree-sitter-bash.wasm');
    const parser = new Parser();
    // Bytes, not a path: given a path the library imports `fs` dynamically, which test runners' VMs refuse.
    parser.setLanguage(await Language.load(new Uint8Array(readFileSync(wasm))));
    return parser;
  })().catch((e: unknown) => {
    loading = undefined;
    throw e;
  }));
}

/** Every simple command `command` runs, and what cannot be checked (bash-analyse.ts). */
export async function analyseBash(command: string): Promise<BashAnalysis> {
  return new BashAnalyser(await bashParser()).analyse(command);
}
