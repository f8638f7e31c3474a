/**
 * Compiles the SDK conformance file (test/types/sdk-conformance.ts) against one installed version
 * of the Claude Agent SDK: the pinned `@anthropic-ai/claude-agent-sdk`, or a dev dependency that is
 * an npm alias of it (`claude-agent-sdk-newest`, moved by scripts/bump-sdk-newest.ts). The file
 * imports `@anthropic-ai/claude-agent-sdk`; for an alias that name is mapped (`paths`) to the
 * alias's `.d.ts`, so the same checks run against each version. Used by
 * test/types/sdk-conformance.test.ts and scripts/bump-sdk-newest.ts.
 */
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const ROOT = path.resolve(__dirname, '..', '..');
export const ENTRY = path.join(ROOT, 'test', 'types', 'sdk-conformance.ts');
const SDK = '@anthropic-ai/claude-agent-sdk';

/** One installed version of the SDK to check against. */
export interface SdkUnderTest {
  /** The dev dependency's name: the SDK's own, or an alias of it. */
  dependency: string;
  /** As installed (node_modules/<dependency>/package.json). */
  version: string;
  /** The `.d.ts` the conformance file's `@anthropic-ai/claude-agent-sdk` resolves to. */
  types: string;
}

/** Our dev dependency that is an alias of the SDK at its newest version. */
export const NEWEST_ALIAS = 'claude-agent-sdk-newest';

/** The SDK and each alias of it among package.json's dev dependencies, as installed. */
export function sdksUnderTest(root = ROOT): SdkUnderTest[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
  return Object.entries(pkg.devDependencies ?? {})
    .filter(([name, spec]) => name === SDK || spec.startsWith(`npm:${SDK}@`))
    .map(([dependency]) => {
      const dir = path.join(root, 'node_modules', dependency);
      const installed = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name: string;
        version: string;
        types: string;
      };
      if (installed.name !== SDK) throw new Error(`${dependency} is installed as ${installed.name}, not ${SDK}: run npm ci`);
      // Real path: TypeScript resolves through a symlinked node_modules (a git worktree sharing one) to it.
      return { dependency, version: installed.version, types: realpathSync(path.join(dir, installed.types)) };
    });
}

export interface Mutation {
  /** Relative to the repository root. */
  file: string;
  from: string;
  to: string;
}

export interface ConformanceError {
  /** Relative to the repository root; empty for an error with no file. */
  file: string;
  line: number;
  message: string;
}

function baseOptions(root: string): ts.CompilerOptions {
  const file = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
  return { ...ts.parseJsonConfigFileContent(file.config, ts.sys, root).options, noEmit: true };
}

/** Parsed files, shared between compilations: each one then costs a type-check, not a parse. */
const parsed = new Map<string, ts.SourceFile | undefined>();

/**
 * Compile the conformance file (or `entryFile`) against `sdk`, with `mutate` applied to one source file's text in
 * memory (the file on disk is not touched): its errors. Only the conformance file is checked
 * (`npm run typecheck` checks the rest).
 */
export function compileConformance(sdk: SdkUnderTest, mutate?: Mutation, root = ROOT, entryFile = ENTRY): ConformanceError[] {
  const options: ts.CompilerOptions = { ...baseOptions(root), paths: { [SDK]: [sdk.types] } };
  const host = ts.createCompilerHost(options);
  const target = mutate && path.join(root, mutate.file);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (f, lang, onError) => {
    if (target && path.resolve(f) === target) {
      const text = ts.sys.readFile(f)!;
      const changed = text.replace(mutate.from, mutate.to);
      if (changed === text) throw new Error(`mutation did not apply to ${mutate.file}: ${mutate.from}`);
      return ts.createSourceFile(f, changed, lang);
    }
    if (!parsed.has(f)) parsed.set(f, getSourceFile(f, lang, onError));
    return parsed.get(f);
  };
  const entry = path.join(root, path.relative(ROOT, entryFile));
  const program = ts.createProgram({ rootNames: [entry], options, host });
  const source = program.getSourceFile(entry)!;
  const resolved = ts.resolveModuleName(SDK, entry, options, host).resolvedModule?.resolvedFileName;
  if (!resolved || path.resolve(resolved) !== path.resolve(sdk.types)) throw new Error(`${SDK} resolved to ${resolved}, not ${sdk.types}`);
  return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => {
    const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    return {
      file: d.file ? path.relative(root, d.file.fileName) : '',
      line: at ? at.line + 1 : 0,
      message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    };
  });
}

/** `file:line: message`, one per error, the message's lines indented under it. */
export function formatErrors(errors: ConformanceError[]): string {
  return errors.map((e) => `${e.file}:${e.line}: ${e.message.replace(/\n/g, '\n    ')}`).join('\n');
}
