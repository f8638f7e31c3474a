/**
 * The SDK conformance check (test/types/sdk-conformance.ts) as part of the jest run, against each
 * installed version of the SDK (the pinned one and the `claude-agent-sdk-newest` alias): it
 * compiles cleanly, and it fails when a message stops conforming — shown by compiling it again
 * with one field of our message types broken in memory (the files on disk are not touched).
 */
import path from 'node:path';
import { compileConformance, formatErrors, NEWEST_ALIAS, ROOT, sdksUnderTest, type Mutation } from './compile-conformance';

const sdks = sdksUnderTest();
const pinned = sdks.find((s) => s.dependency === '@anthropic-ai/claude-agent-sdk')!;
const messages = (m?: Mutation) => compileConformance(pinned, m).map((e) => e.message);

test('the SDK is checked at two versions: the pinned one and the newest alias', () => {
  expect(sdks.map((s) => s.dependency).sort()).toEqual(['@anthropic-ai/claude-agent-sdk', NEWEST_ALIAS]);
});

test.each(sdks.map((s) => [`${s.dependency} ${s.version}`, s] as const))(
  'against %s: every message type and subtype is covered and assignable to its variant of the SDK’s; Options and Query conform',
  (_name, sdk) => {
    expect(formatErrors(compileConformance(sdk))).toBe('');
  },
);

test.each<[string, Mutation, RegExp]>([
  ['an event uuid typed as a plain string', { file: 'src/shared/events.ts', from: '  uuid: UUID;', to: '  uuid: string;' }, /uuid/],
  [
    'a text block without `citations`',
    { file: 'src/shared/sdk-shapes.ts', from: "{ type: 'text'; text: string; citations: null }", to: "{ type: 'text'; text: string }" },
    /citations/,
  ],
  [
    'a success result whose `result` may be missing',
    { file: 'src/shared/events.ts', from: "  subtype: 'success';\n  result: string;", to: "  subtype: 'success';\n  result?: string;" },
    /result/,
  ],
  ['system/init without `apiKeySource`', { file: 'src/shared/events.ts', from: "  apiKeySource: 'none';\n", to: '' }, /apiKeySource/],
  [
    'an SDK subtype missing from the union (system/status)',
    {
      file: 'src/shared/sdk-messages.ts',
      from: '  | SDKStatusMessage\n  | SDKControlRequestProgressMessage',
      to: '  | SDKControlRequestProgressMessage',
    },
    /"status"/,
  ],
  [
    'an SDK result subtype missing (error_max_structured_output_retries)',
    { file: 'src/shared/events.ts', from: " | 'error_max_structured_output_retries';", to: ';' },
    /error_max_structured_output_retries/,
  ],
  [
    'a message we never send without one of the SDK’s optional fields',
    { file: 'src/shared/sdk-messages.ts', from: '  prevent_continuation?: boolean;\n', to: '' },
    /prevent_continuation|does not satisfy the constraint 'true'/,
  ],
  [
    'a message we never send with a field the SDK’s is narrower on',
    { file: 'src/shared/sdk-messages.ts', from: "  state: 'idle' | 'running' | 'requires_action';", to: '  state: string;' },
    /state/,
  ],
  [
    'a subtype of our own that is also the SDK’s',
    { file: 'src/shared/events.ts', from: "  subtype: 'warning';", to: "  subtype: 'informational';" },
    /./,
  ],
])('it fails to compile with %s', (_name, mutation, mentions) => {
  // The conformance file itself rejects it (not only the emission site that builds the message).
  const errors = messages(mutation);
  expect(errors.length).toBeGreaterThan(0);
  expect(errors.join('\n')).toMatch(mentions);
});

const PROGRAMS = ['sdk-program.ts', 'sdk-app.ts'];

test.each(sdks.flatMap((s) => PROGRAMS.map((p) => [p, `${s.dependency} ${s.version}`, s] as const)))(
  'a program written for the SDK (%s) compiles against %s, and against this package with only its import changed',
  (file, _name, sdk) => {
    const program = (m?: Mutation) => formatErrors(compileConformance(sdk, m, ROOT, path.join(ROOT, 'test', 'types', file)));
    // Against the SDK as written: the program is sound.
    expect(program()).toBe('');
    const swapped = {
      file: `test/types/${file}`,
      from: "} from '@anthropic-ai/claude-agent-sdk';",
      to: "} from '../../src/index';",
    };
    expect(program(swapped)).toBe('');
    // The swap is real: the package's types are what it compiles against then (a name the SDK has and we lack fails).
    const missing = { ...swapped, to: "  type InMemorySessionStore,\n} from '../../src/index';" };
    expect(program(missing)).toMatch(/InMemorySessionStore/);
  },
);
