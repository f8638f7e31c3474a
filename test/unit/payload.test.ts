import { fitsPayload, jsonBytes, MAX_PAYLOAD_BYTES, truncateToBytes, utf8Length } from '../../src/shared/payload';

const encoded = (s: string) => new TextEncoder().encode(s).length;

test('the guard leaves half a MiB under the 2 MiB blob limit', () => {
  expect(MAX_PAYLOAD_BYTES).toBe(1_572_864);
});

test.each([
  ['ascii', 'hello'],
  ['two-byte', 'héllo ñ'],
  ['three-byte', '日本語のテキスト'],
  ['four-byte (surrogate pairs)', 'emoji 😀🚀 and 𝄞'],
  ['lone high surrogate', 'a\ud800b'],
  ['lone low surrogate at the end', 'ab\udc00'],
])('utf8Length matches TextEncoder: %s', (_name, s) => {
  expect(utf8Length(s)).toBe(encoded(s));
});

test('jsonBytes counts the JSON text in UTF-8, escapes included', () => {
  expect(jsonBytes({ a: 'é' })).toBe(encoded('{"a":"é"}'));
  expect(jsonBytes({ a: 'é' })).toBe(10);
  expect(jsonBytes('line\nbreak')).toBe(encoded(JSON.stringify('line\nbreak')));
  expect(jsonBytes(undefined)).toBe(0);
});

test('fitsPayload compares against the limit', () => {
  expect(fitsPayload('x'.repeat(10), 12)).toBe(true);
  expect(fitsPayload('x'.repeat(11), 12)).toBe(false); // 11 + two quotes
  expect(fitsPayload({ big: 'x'.repeat(MAX_PAYLOAD_BYTES) })).toBe(false);
});

describe('truncateToBytes', () => {
  test('returns text that fits unchanged', () => {
    expect(truncateToBytes('abc', 3, '[cut]')).toBe('abc');
  });

  test('keeps the longest prefix that fits with the note', () => {
    expect(truncateToBytes('abcdefghij', 8, '[..]')).toBe('abcd[..]');
  });

  test('never splits a multi-byte character or a surrogate pair', () => {
    // "é" is 2 bytes: 5 bytes of budget for text hold "aé" + "é" would need 6.
    expect(truncateToBytes('aééé', 5 + 1, '!')).toBe('aéé!');
    expect(truncateToBytes('aééé', 4 + 1, '!')).toBe('aé!');
    // "😀" is 4 bytes and two UTF-16 units.
    const out = truncateToBytes('😀😀😀', 7 + 1, '!');
    expect(out).toBe('😀!');
    expect(utf8Length(out)).toBeLessThanOrEqual(8);
  });

  test('the result is within the limit for long multi-byte text', () => {
    const text = '日本😀é'.repeat(10_000);
    const out = truncateToBytes(text, 1000, '\n[truncated]');
    expect(encoded(out)).toBeLessThanOrEqual(1000);
    expect(encoded(out)).toBeGreaterThan(990);
    expect(out.endsWith('\n[truncated]')).toBe(true);
  });

  test('a note longer than the limit is itself cut', () => {
    expect(truncateToBytes('abcdef', 3, '[truncated]')).toBe('[tr');
  });
});
