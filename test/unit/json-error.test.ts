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
