/** Boundaries of loop detection: where a signature is hashed, how the history is cut, ties. */
import { callSignature, canonicalJson, detectLoop, recordTurn } from '../../src/workflows/session/context/loop-detection';

const A = 'Read {"file_path":"/a"}';
const B = 'Bash {"command":"npm test"}';

describe('callSignature', () => {
  test('an input whose JSON is exactly 200 characters stays inline; one more is hashed', () => {
    const at = { c: 'x'.repeat(192) }; // {"c":"…"} = 192 + 8
    expect(JSON.stringify(at)).toHaveLength(200);
    expect(callSignature({ name: 'Write', input: at })).toBe(`Write ${JSON.stringify(at)}`);
    expect(callSignature({ name: 'Write', input: { c: 'x'.repeat(193) } })).toMatch(/^Write #[0-9a-f]+\/201$/);
  });

  test('the hash is cyrb53 of the canonical JSON, so signatures carried across a deploy still match', () => {
    // cyrb53 (seed 0) of '{"content":"x…x"}' (300 x's, 314 characters), in hex.
    expect(callSignature({ name: 'Write', input: { content: 'x'.repeat(300) } })).toBe('Write #9a3c8d1726c3b/314');
  });

  test('a call without input is signed as an empty object', () => {
    expect(callSignature({ name: 'Glob', input: undefined })).toBe('Glob {}');
  });
});

test('canonicalJson never returns undefined: what JSON.stringify drops becomes null', () => {
  expect(canonicalJson(undefined)).toBe('null');
  expect(canonicalJson([() => 1, undefined])).toBe('[null,null]');
});

describe('recordTurn', () => {
  const one = (cmd: string) => [{ name: 'Bash', input: { command: cmd } }];
  const sig = (cmd: string) => `Bash {"command":"${cmd}"}`;

  test('drops the oldest turns until one more drop would leave fewer calls than the window', () => {
    let h: string[][] = [];
    for (const cmd of ['a', 'b', 'c', 'd', 'e']) h = recordTurn(h, one(cmd), 3);
    expect(h).toEqual([[sig('c')], [sig('d')], [sig('e')]]);
  });

  test('a turn is kept whole: the window may hold a few more calls than its size', () => {
    const h = recordTurn(
      [[A, B]],
      [
        { name: 'Bash', input: { command: 'x' } },
        { name: 'Bash', input: { command: 'y' } },
      ],
      3,
    );
    expect(h).toEqual([
      [A, B],
      [sig('x'), sig('y')],
    ]);
  });

  test('the newest turn stays even when it alone fills the window', () => {
    const calls = ['1', '2', '3', '4'].map((c) => ({ name: 'Bash', input: { command: c } }));
    expect(recordTurn([[A]], calls, 2)).toEqual([calls.map((c) => sig(c.input.command))]);
  });
});

describe('detectLoop', () => {
  test('nothing in the newest turn: no loop, even if older calls cycle', () => {
    expect(detectLoop([[A], [B], [A], [B], [A], [B], []])).toBeNull();
    expect(detectLoop([])).toBeNull();
  });

  test('a threshold under 2 never reports: one call is not a loop', () => {
    expect(detectLoop([[A], [B]], { threshold: 1 })).toBeNull();
    expect(detectLoop([[A], [A]], { threshold: 1 })).toBeNull();
  });

  test('a run of one call is a repeat, not a cycle of two equal calls', () => {
    expect(detectLoop([[A], [A], [A], [A], [A], [A]])).toEqual({ kind: 'repeat', signature: A, toolName: 'Read', count: 6 });
  });

  test('the call repeated most often is named', () => {
    // A A B B B | A B: no cycle; A 3 times, B 4 times.
    expect(detectLoop([[A], [A], [B], [B], [B], [A, B]])).toEqual({ kind: 'repeat', signature: B, toolName: 'Bash', count: 4 });
  });

  test('on a tie, the earliest call of the newest turn is named', () => {
    // A A B B | A B: no cycle; A and B 3 times each.
    expect(detectLoop([[A], [A], [B], [B], [A, B]])).toEqual({ kind: 'repeat', signature: A, toolName: 'Read', count: 3 });
    expect(detectLoop([[A], [A], [B], [B], [B, A]])).toEqual({ kind: 'repeat', signature: B, toolName: 'Bash', count: 3 });
  });
});
