/**
 * Words of a parsed Bash command: their value when the shell would give them a fixed one, or
 * null when it is computed at run time (an expansion, a substitution, a glob, brace expansion).
 * Over tree-sitter-bash's nodes (ARCHITECTURE.md#bash-rules-on-a-real-parse).
 */
import type { Node } from 'web-tree-sitter';

export interface Word {
  /** The word's source text. */
  src: string;
  /** What the shell makes of it, or null when that is known only at run time. */
  value: string | null;
}

export function wordOf(node: Node): Word {
  return { src: node.text, value: staticValue(node) };
}

/** A value known before the command runs, or null. */
export function staticValue(node: Node): string | null {
  switch (node.type) {
    case 'word':
      return unquotedWord(node.text);
    case 'number':
      return /^[0-9]+$/.test(node.text) ? node.text : null;
    case 'raw_string':
      return node.text.slice(1, -1);
    case 'ansi_c_string':
      return decodeAnsiC(node.text.slice(2, -1));
    case 'string':
    case 'translated_string':
      return doubleQuoted(node);
    case 'concatenation': {
      let out = '';
      let unquoted = '';
      for (const part of node.namedChildren) {
        if (!part) return null;
        const v = staticValue(part);
        if (v === null) return null;
        out += v;
        if (part.type === 'word') unquoted += part.text;
      }
      // `{a,b}` arrives as the words `{`, `a,b`, `}`: brace expansion happens on the whole word.
      if (EXPANDS.test(unquoted)) return null;
      return out;
    }
    default:
      return null;
  }
}

/** Unquoted text the shell expands: globs, brace expansion, extglobs, anything left with a `$`. */
const EXPANDS = /[*?$`]|\[.*\]|\{.*\}|[@!+]\(/;

/** An unquoted word: backslashes quote the next character; globs, braces and `$` make it computed. */
function unquotedWord(text: string): string | null {
  let out = '';
  let plain = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      if (text[i + 1] === '\n') i++;
      else if (i + 1 < text.length) out += text[++i];
      continue;
    }
    out += c;
    plain += c;
  }
  // Pathname expansion, brace expansion, extglobs and anything left with a `$` are run-time values.
  if (EXPANDS.test(plain)) return null;
  return out;
}

/** Inside "…": only literal content is static; `\` quotes only $ ` " \ and newline there. */
function doubleQuoted(node: Node): string | null {
  let out = '';
  for (const part of node.namedChildren) {
    if (!part || part.type !== 'string_content') return null;
    out += part.text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === '\n' ? '' : c));
  }
  // tree-sitter leaves `$` alone in content it could not read as an expansion; the shell may not.
  return out.includes('$') || out.includes('`') ? null : out;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** The body of `$'…'` as bash decodes it. */
function decodeAnsiC(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const e = body[++i]!;
    if (e in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[e];
    } else if (/[0-7]/.test(e)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      out += String.fromCharCode(parseInt(m, 8) & 0xff);
      i += m.length - 1;
    } else if (e === 'x') {
      const m = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1));
      if (m) {
        out += String.fromCharCode(parseInt(m[0], 16));
        i += m[0].length;
      } else out += '\\x';
    } else if (e === 'u' || e === 'U') {
      const m = new RegExp(`^[0-9a-fA-F]{1,${e === 'u' ? 4 : 8}}`).exec(body.slice(i + 1));
      if (m) {
        out += String.fromCodePoint(parseInt(m[0], 16));
        i += m[0].length;
      } else out += `\\${e}`;
    } else if (e === 'c' && i + 1 < body.length) {
      out += String.fromCharCode(body.charCodeAt(++i) & 0x1f);
    } else {
      out += `\\${e}`;
    }
  }
  return out;
}
