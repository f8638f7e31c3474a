/** Where JSON text goes wrong, said without quoting it (settings files may hold secrets). */
import { jsonProblem } from '../../src/shared/json-error';
import { parseSettingsJson } from '../../src/shared/permissions/settings';

test.each<[string, string, number, number, string]>([
  ['trailing comma in an array', '{\n  "allow": ["Read",]\n}', 2, 20, "a trailing ',' before ']'"],
  ['trailing comma in an object', '{"a": 1,\n}', 2, 1, "a trailing ',' before '}'"],
  ['unquoted key', '{\n  allow: []\n}', 2, 3, 'expected a property name in double quotes'],
  ['missing colon', '{"a" 1}', 1, 6, "expected ':' after a property name"],
  ['missing comma', '{"a": 1 "b": 2}', 1, 9, "expected ',' or '}'"],
  ['bad literal', '{"a": tru}', 1, 7, "unexpected 't'"],
  ['single quotes', "{'a': 1}", 1, 2, 'expected a property name in double quotes'],
  ['unterminated string', '{"a": "sk-secret', 1, 7, 'unterminated string'],
  ['bad escape', '{"a": "x\\q"}', 1, 9, 'invalid escape in a string'],
  ['raw newline in a string', '{"a": "x\ny"}', 1, 9, 'control character in a string (use \\n, \\t, …)'],
  ['cut short', '{"a": [1, 2', 1, 12, 'unexpected end of the text'],
  ['empty', '', 1, 1, 'unexpected end of the text'],
  ['two values', '{} {}', 1, 4, 'more text after the JSON value'],
  ['a comment', '{\n  // no comments in JSON\n  "a": 1\n}', 2, 3, 'expected a property name in double quotes'],
])('%s', (_what, text, line, column, problem) => {
  expect(() => JSON.parse(text)).toThrow();
  expect(jsonProblem(text)).toEqual({ line, column, problem });
});

test('valid JSON has no problem', () => {
  for (const text of ['{}', '[]', ' {"a": [1, -2.5e3, true, false, null, "x\\u00e9\\n"]} ', '"s"', '0'])
    expect(jsonProblem(text)).toBeUndefined();
});

test('a settings file with a syntax error: the message names the line and column and quotes nothing of the file', () => {
  const text = '{\n  "env": {"API_KEY": "sk-very-secret-value"},\n  "permissions": {"allow": ["Read",]}\n}';
  let message = '';
  try {
    parseSettingsJson(text, '/p/.claude/settings.json');
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toBe("/p/.claude/settings.json: (file): not valid JSON at line 3 column 36: a trailing ',' before ']'");
});

test.each<[string, string, number, number, string]>([
  ['a character outside printable ASCII, by code point', '{"a": \u00a0}', 1, 7, 'unexpected character U+00A0'],
  ['a control character outside a string', '[\u0001]', 1, 2, 'unexpected character U+0001'],
  ['DEL is not printable', '\u007f', 1, 1, 'unexpected character U+007F'],
  ['the first printable character', '!', 1, 1, "unexpected '!'"],
  ['the last printable character', '~', 1, 1, "unexpected '~'"],
  ['a literal is read from where the value starts, not further on', '{"a": yes 1}', 1, 7, "unexpected 'y'"],
  ['missing comma in an array', '[1 2]', 1, 4, "expected ',' or ']'"],
  ['missing comma in a nested array', '{"a": [1 2]}', 1, 10, "expected ',' or ']'"],
  ['cut short after a property name', '{"a"', 1, 5, 'unexpected end of the text'],
  ['cut short after a property value', '{"a": 1', 1, 8, 'unexpected end of the text'],
  ['cut short after an array element', '[1', 1, 3, 'unexpected end of the text'],
  ['a \\u escape needs four hex digits', '"\\u12"', 1, 2, 'invalid escape in a string'],
  ['a \\u escape needs hex digits', '"\\u00G9"', 1, 2, 'invalid escape in a string'],
  ['hex digits after another letter are no \\u escape', '"\\x1234"', 1, 2, 'invalid escape in a string'],
  ['a backslash at the end of the text', '"\\', 1, 2, 'invalid escape in a string'],
  ['U+001F is a control character', '"a\u001fb"', 1, 3, 'control character in a string (use \\n, \\t, …)'],
  ['a leading zero', '01', 1, 2, 'more text after the JSON value'],
  ['a fraction needs digits', '1.', 1, 2, 'more text after the JSON value'],
  ['an exponent needs digits', '1e', 1, 2, 'more text after the JSON value'],
  ['a number does not start with a dot', '.5', 1, 1, "unexpected '.'"],
  ['a number does not start with a plus', '+1', 1, 1, "unexpected '+'"],
  ['a minus alone', '-', 1, 1, "unexpected '-'"],
])('%s', (_what, text, line, column, problem) => {
  expect(() => JSON.parse(text)).toThrow();
  expect(jsonProblem(text)).toEqual({ line, column, problem });
});

test('valid JSON has no problem: every escape, spaces in strings, tab and CR as whitespace, every number form', () => {
  for (const text of [
    '"a b"',
    '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
    '"\\u00E9\\u00e9\\uABCD"',
    '{\t"a":\r\n1\t}',
    '[12, -0, 10.25, 1e10, 1E+5, 2e-3, -3.75E-12]',
  ]) {
    expect(() => JSON.parse(text)).not.toThrow();
    expect(jsonProblem(text)).toBeUndefined();
  }
});

test('a broken file nested deeper than 1,000 levels is reported as a settings error, not a stack overflow', () => {
  const deep = '['.repeat(20_000);
  expect(jsonProblem(deep)).toEqual({ line: 1, column: 1_001, problem: 'nested more than 1000 levels deep' });
  expect(() => parseSettingsJson(deep, '/p/.claude/settings.json')).toThrow(
    '/p/.claude/settings.json: (file): not valid JSON at line 1 column 1001: nested more than 1000 levels deep',
  );
  // 1,000 levels are still walked to the real problem.
  expect(jsonProblem(`${'['.repeat(1_000)}x`)).toEqual({ line: 1, column: 1_001, problem: "unexpected 'x'" });
});
