import type { ToolUseBlock } from '../../src/shared/messages';
import { callSignature, canonicalJson, detectLoop, recordTurn } from '../../src/workflows/session/context/loop-detection';
import { loopWarningText } from '../../src/shared/model-texts';

const use = (name: string, input: unknown): Pick<ToolUseBlock, 'name' | 'input'> => ({ name, input });
const A = 'Read {"file_path":"/a"}';
const B = 'Bash {"command":"npm test"}';
const C = 'Grep {"pattern":"x"}';

describe('signatures', () => {
  test('name plus canonical JSON: key order does not matter, nested keys sorted too', () => {
    expect(callSignature(use('Edit', { old_string: 'a', file_path: '/f', opts: { z: 1, a: [2, { y: 1, b: 0 }] } }))).toBe(
      'Edit {"file_path":"/f","old_string":"a","opts":{"a":[2,{"b":0,"y":1}],"z":1}}',
    );
    expect(callSignature(use('Read', { b: 1, a: 2 }))).toBe(callSignature(use('Read', { a: 2, b: 1 })));
    expect(callSignature(use('Read', { a: 1 }))).not.toBe(callSignature(use('Grep', { a: 1 })));
  });

  test('canonicalJson drops undefined properties like JSON.stringify', () => {
    expect(canonicalJson({ b: undefined, a: null, c: [undefined] })).toBe('{"a":null,"c":[null]}');
  });

  test('invalid JSON arguments are signed by their raw text', () => {
    expect(callSignature({ name: 'Bash', input: {}, raw_input: '{"command": ' })).toBe('Bash {"command": ');
  });

  test('a long input is hashed, stably, so the carried history stays small', () => {
    const big = { file_path: '/f', content: 'x'.repeat(100_000) };
    const sig = callSignature(use('Write', big));
    expect(sig).toMatch(/^Write #[0-9a-f]+\/100031$/);
    expect(callSignature(use('Write', { content: big.content, file_path: '/f' }))).toBe(sig);
    expect(callSignature(use('Write', { ...big, file_path: '/g' }))).not.toBe(sig);
  });
});

describe('detectLoop', () => {
  test('the same call 3 times within the last 10 calls', () => {
    expect(detectLoop([[A], [A]])).toBeNull();
    expect(detectLoop([[A], [B], [A], [C], [A]])).toEqual({ kind: 'repeat', signature: A, toolName: 'Read', count: 3 });
  });

  test('repeats older than the window do not count', () => {
    const filler = (i: number) => [`Read {"file_path":"/f${i}"}`];
    const history = [[A], [A], ...Array.from({ length: 8 }, (_, i) => filler(i)), [A]];
    expect(detectLoop(history)).toBeNull(); // the first two A's are 11 and 10 calls back
    expect(detectLoop(history, { window: 11 })).toMatchObject({ kind: 'repeat', count: 3 });
  });

  test('threshold and window are configurable', () => {
    expect(detectLoop([[A], [A]], { threshold: 2 })).toMatchObject({ kind: 'repeat', count: 2 });
    expect(detectLoop([[A], [B], [C], [A], [A]], { threshold: 3, window: 3 })).toBeNull();
    expect(detectLoop([[A], [B], [C], [A], [A]], { threshold: 3, window: 5 })).toMatchObject({ count: 3 });
  });

  test('only a loop involving the newest turn is reported', () => {
    expect(detectLoop([[A], [A], [A], [B]])).toBeNull();
    expect(detectLoop([[A], [A], []])).toBeNull();
  });

  test('repeats inside one turn count', () => {
    expect(detectLoop([[A, A, A]])).toMatchObject({ kind: 'repeat', signature: A, count: 3 });
  });

  test('alternating between two calls (A, B, A, B, A, B) is a cycle', () => {
    expect(detectLoop([[A], [B], [A], [B]])).toBeNull();
    // A, B, A, B, A: A's third call is a plain repeat before the cycle completes.
    expect(detectLoop([[A], [B], [A], [B], [A]])).toMatchObject({ kind: 'repeat', signature: A, count: 3 });
    expect(detectLoop([[A], [B], [A], [B], [A], [B]])).toEqual({
      kind: 'cycle',
      pattern: [A, B],
      toolNames: ['Read', 'Bash'],
      count: 3,
    });
    expect(detectLoop([[C], [A, B], [A, B], [A, B], [A, B]])).toMatchObject({ kind: 'cycle', count: 4 });
  });

  test('a cycle of three', () => {
    expect(detectLoop([[A], [B], [C], [A], [B], [C], [A], [B], [C]])).toMatchObject({
      kind: 'cycle',
      pattern: [A, B, C],
      count: 3,
    });
  });
});

test('recordTurn keeps the history bounded by the window', () => {
  let h: string[][] = [];
  for (let i = 0; i < 50; i++) h = recordTurn(h, [use('Read', { file_path: '/a' }), use('Bash', { command: `${i}` })]);
  expect(h.flat().length).toBeLessThanOrEqual(11);
  expect(h.flat().length).toBeGreaterThanOrEqual(10);
  expect(h[h.length - 1]).toEqual([A, 'Bash {"command":"49"}']);
  expect(detectLoop(h)).toMatchObject({ kind: 'repeat', signature: A });
});

test('warning texts', () => {
  expect(loopWarningText({ kind: 'repeat', signature: A, toolName: 'Read', count: 3 })).toBe(
    'Loop warning: you have called Read with the same arguments 3 times in your last 10 tool calls. Doing the same thing again will not give a different result. Stop and reconsider: re-read the latest output, check your assumptions, and take a different approach. If you are blocked, say what is blocking you.',
  );
  expect(loopWarningText({ kind: 'cycle', pattern: [A, B], toolNames: ['Read', 'Bash'], count: 3 })).toMatch(
    /^Loop warning: your last 6 tool calls repeat the same sequence \(Read → Bash\) 3 times\. Doing the same/,
  );
});
