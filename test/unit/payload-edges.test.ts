/**
 * UTF-8 sizes at every encoding boundary, checked against TextEncoder (which writes a lone
 * surrogate as U+FFFD, 3 bytes), and truncation checked against a TextEncoder-based oracle.
 */
import { truncateToBytes, utf8Length } from '../../src/shared/payload';

const encoded = (s: string) => new TextEncoder().encode(s).length;

const EDGES: [string, string][] = [
  ['U+007F, the last 1-byte character', '\u007f'],
  ['U+0080, the first 2-byte character', '\u0080'],
  ['U+07FF, the last 2-byte character', '\u07ff'],
  ['U+0800, the first 3-byte character', '\u0800'],
  ['U+D7FF, the last character before the surrogates', '\ud7ff'],
  ['the lowest surrogate pair, U+10000', '\ud800\udc00'],
  ['the highest surrogate pair, U+10FFFF', '\udbff\udfff'],
  ['a high surrogate before U+DBFF+1 (a low surrogate start)', '\udbff\udc00'],
  ['a 3-byte character then a lone low surrogate', '日\udc00'],
  ['a lone low surrogate then another', '\udc00\udc00'],
  ['U+FFFF then a lone low surrogate', '\uffff\udc00'],
  ['a high surrogate then a 2-byte character', '\ud800é'],
  ['a high surrogate then U+E000', '\ud800\ue000'],
  ['a high surrogate then U+DBFF', '\ud800\udbff'],
  ['a high surrogate then U+DFFF', '\ud800\udfff'],
  ['a lone high surrogate at the end', 'a\udbff'],
];

test.each(EDGES)('utf8Length matches TextEncoder: %s', (_name, s) => {
  expect(utf8Length(s)).toBe(encoded(s));
});

/** The longest prefix within `max` bytes that does not split a surrogate pair. */
function oracle(s: string, max: number): string {
  let best = '';
  for (let i = 0; i <= s.length; i++) {
    const splitsPair = i > 0 && i < s.length && /[\ud800-\udbff]/.test(s[i - 1]!) && /[\udc00-\udfff]/.test(s[i]!);
    if (!splitsPair && encoded(s.slice(0, i)) <= max) best = s.slice(0, i);
  }
  return best;
}

test.each(EDGES)('truncateToBytes keeps the longest prefix that fits, at every limit: %s', (_name, edge) => {
  const text = `ab${edge}c${edge}`;
  for (let max = 0; max < encoded(text); max++) {
    expect([max, truncateToBytes(text, max, '')]).toEqual([max, oracle(text, max)]);
    // With a note, the text gets one byte less (while the text itself does not fit).
    if (max + 1 < encoded(text)) expect([max, truncateToBytes(text, max + 1, '!')]).toEqual([max, `${oracle(text, max)}!`]);
  }
});

test('a note of exactly the limit replaces the text', () => {
  expect(truncateToBytes('abcdef', 5, '[cut]')).toBe('[cut]');
});
