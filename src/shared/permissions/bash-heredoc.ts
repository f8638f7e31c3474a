/**
 * Here-documents: `cat <<EOF … EOF`. The body is text, not commands — but with an unquoted
 * delimiter, `$(…)` and backticks in it still run, so those are scanned like any expansion.
 */
import { Unanalysable } from './bash-words';

export interface Heredoc {
  delimiter: string;
  /** Unquoted delimiter: expansions in the body run. */
  expand: boolean;
  /** `<<-`: leading tabs are stripped before the delimiter is recognised. */
  stripTabs: boolean;
}

/** Parse `<<DELIM`, `<<-DELIM`, `<<'DELIM'` at `i`; the body follows the next newline. */
export function readHeredocOperator(s: string, i: number): { end: number; heredoc: Heredoc } {
  let j = i + 2;
  const stripTabs = s[j] === '-';
  if (stripTabs) j++;
  while (s[j] === ' ' || s[j] === '\t') j++;
  let delimiter = '';
  let quoted = false;
  while (j < s.length && !' \t\n;|&<>()'.includes(s[j]!)) {
    const c = s[j]!;
    if (c === "'" || c === '"') {
      const end = s.indexOf(c, j + 1);
      if (end < 0) throw new Unanalysable('unterminated quote in here-document delimiter');
      delimiter += s.slice(j + 1, end);
      quoted = true;
      j = end + 1;
    } else if (c === '\\') {
      delimiter += s[j + 1] ?? '';
      quoted = true;
      j += 2;
    } else {
      delimiter += c;
      j++;
    }
  }
  if (!delimiter) throw new Unanalysable('here-document without a delimiter');
  return { end: j, heredoc: { delimiter, expand: !quoted, stripTabs } };
}

/** Skip here-document bodies after a newline; an unquoted delimiter means `$(…)` in the body runs. */
export function readHeredocBodies(s: string, heredocs: Heredoc[], start: number, scanExpansion: (at: number) => number): number {
  let i = start;
  for (const doc of heredocs) {
    for (;;) {
      if (i >= s.length) return s.length; // bash runs it with a warning; the body so far was scanned
      const eol = s.indexOf('\n', i);
      const lineEnd = eol < 0 ? s.length : eol;
      const line = s.slice(i, lineEnd);
      if ((doc.stripTabs ? line.replace(/^\t+/, '') : line) === doc.delimiter) {
        i = lineEnd + 1;
        break;
      }
      if (doc.expand) scanBodyLine(s, i, lineEnd, scanExpansion);
      i = lineEnd + 1;
    }
  }
  return Math.min(i, s.length);
}

function scanBodyLine(s: string, from: number, to: number, scanExpansion: (at: number) => number): void {
  for (let i = from; i < to;) {
    if (s[i] === '\\') {
      i += 2;
      continue;
    }
    const end = s[i] === '$' || s[i] === '`' ? scanExpansion(i) : i;
    i = end > i ? end : i + 1;
  }
}
