/**
 * Where JSON text first goes wrong, and what is wrong, without quoting it. `JSON.parse`'s own
 * messages are no use for a settings file: some V8 messages carry no position, and some quote the
 * text around the error — which may be a secret in the file (ARCHITECTURE.md#secrets-stay-on-workers).
 * Pure; called only after JSON.parse has failed.
 */

export interface JsonProblem {
  line: number;
  column: number;
  /** e.g. "unexpected ']'", "unexpected end of the text", "unterminated string". */
  problem: string;
}

class Stop extends Error {
  constructor(
    readonly at: number,
    readonly problem: string,
  ) {
    super(problem);
  }
}

/** Deeper than any settings file needs; well inside the stack of a default Node thread. */
const MAX_DEPTH = 1_000;

export function jsonProblem(text: string): JsonProblem | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (problem?: string): never => {
    if (i >= text.length) throw new Stop(i, 'unexpected end of the text');
    const ch = text[i]!;
    throw new Stop(
      i,
      problem ??
        (/[\x21-\x7e]/.test(ch)
          ? `unexpected '${ch}'`
          : `unexpected character U+${ch.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`),
    );
  };
  const expect = (ch: string, what: string) => {
    ws();
    if (text[i] !== ch) fail(i < text.length ? `expected ${what}` : undefined);
    i++;
  };
  const string = () => {
    const start = i;
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) throw new Stop(start, 'unterminated string');
      const ch = text[i]!;
      if (ch === '"') return void i++;
      if (ch === '\\') {
        const esc = text[i + 1];
        if (esc === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else if (esc !== undefined && '"\\/bfnrt'.includes(esc)) i += 2;
        else throw new Stop(i, 'invalid escape in a string');
      } else if (ch < ' ') throw new Stop(i, 'control character in a string (use \\n, \\t, …)');
      else i++;
    }
  };
  const value = (depth: number): void => {
    ws();
    const ch = text[i];
    // A bound on nesting keeps this walk off the stack limit (a RangeError is no error report).
    if ((ch === '{' || ch === '[') && depth >= MAX_DEPTH) fail(`nested more than ${MAX_DEPTH} levels deep`);
    if (ch === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(text[i] === '}' ? "a trailing ',' before '}'" : 'expected a property name in double quotes');
        string();
        expect(':', "':' after a property name");
        value(depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail(i < text.length ? "expected ',' or '}'" : undefined);
      }
    }
    if (ch === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        ws();
        if (text[i] === ']') fail("a trailing ',' before ']'");
        value(depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail(i < text.length ? "expected ',' or ']'" : undefined);
      }
    }
    if (ch === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (!literal) fail();
    i += literal![0].length;
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail('more text after the JSON value');
    return undefined;
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    const before = text.slice(0, e.at).split('\n');
    return { line: before.length, column: before[before.length - 1]!.length + 1, problem: e.problem };
  }
}
