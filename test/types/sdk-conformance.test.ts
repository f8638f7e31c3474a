/**
 * The SDK conformance check (test/types/sdk-conformance.ts) as part of the jest run: it compiles
 * cleanly, and it fails when an emitted message stops conforming — shown by compiling it again with
 * one field of our message types broken in memory (the files on disk are not touched).
 */
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const ENTRY = path.join(ROOT, 'test', 'types', 'sdk-conformance.ts');
const PROGRAM = path.join(ROOT, 'test', 'types', 'sdk-program.ts');

function compilerOptions(): ts.CompilerOptions {
  const file = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  return { ...ts.parseJsonConfigFileContent(file.config, ts.sys, ROOT).options, noEmit: true };
}

const options = compilerOptions();
const parsed = new Map<string, ts.SourceFile | undefined>();

/**
 * Compile the conformance file, with `mutate` applied to one source file's text; its errors, as
 * text. Only the conformance file is checked (`npm run typecheck` checks the rest), and parsed
 * files are shared between compilations, so each one costs a type-check, not a parse.
 */
function compile(mutate?: { file: string; from: string; to: string }, entryFile = ENTRY): string[] {
  const host = ts.createCompilerHost(options);
  const target = mutate && path.join(ROOT, mutate.file);
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
  const program = ts.createProgram({ rootNames: [entryFile], options, host });
  const entry = program.getSourceFile(entryFile)!;
  return [...program.getSyntacticDiagnostics(entry), ...program.getSemanticDiagnostics(entry)].map((d) =>
    ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  );
}

test('every message our stream emits is assignable to its variant of the SDK’s SDKMessage (and Options/Query conform)', () => {
  expect(compile()).toEqual([]);
});

test.each([
  ['an event uuid typed as a plain string', 'src/shared/events.ts', '  uuid: UUID;', '  uuid: string;', /uuid/],
  [
    'a text block without `citations`',
    'src/shared/sdk-shapes.ts',
    "{ type: 'text'; text: string; citations: null }",
    "{ type: 'text'; text: string }",
    /citations/,
  ],
  [
    'a success result whose `result` may be missing',
    'src/shared/events.ts',
    "  subtype: 'success';\n  result: string;",
    "  subtype: 'success';\n  result?: string;",
    /result/,
  ],
  ['system/init without `apiKeySource`', 'src/shared/events.ts', "  apiKeySource: 'none';\n", '', /apiKeySource/],
])('it fails to compile with %s', (_name, file, from, to, mentions) => {
  // The conformance file itself rejects it (not only the emission site that builds the message).
  const errors = compile({ file, from, to });
  expect(errors.length).toBeGreaterThan(0);
  expect(errors.join('\n')).toMatch(mentions);
});

test('a program written for the SDK (hooks, listSessions, AbortError) compiles against this package with only its import changed', () => {
  // Against the SDK as written: the program is sound.
  expect(compile(undefined, PROGRAM)).toEqual([]);
  const swapped = { file: 'test/types/sdk-program.ts', from: "} from '@anthropic-ai/claude-agent-sdk';", to: "} from '../../src/index';" };
  expect(compile(swapped, PROGRAM)).toEqual([]);
  // The swap is real: the package's types are what it compiles against then (a name the SDK has and we lack fails).
  const missing = { ...swapped, to: "  type InMemorySessionStore,\n} from '../../src/index';" };
  expect(compile(missing, PROGRAM).join('\n')).toMatch(/InMemorySessionStore/);
});
