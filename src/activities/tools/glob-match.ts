/**
 * A small glob → RegExp compiler (Node 20 has no fs.glob): `*` and `?` stay within one path
 * segment, `**` spans segments, `{a,b}` alternates (nestable), `[abc]` / `[!abc]` / `[a-z]` are
 * classes, `\x` escapes. Paths are '/'-separated and relative to the search root.
 */

const META = /[*?[{\\]/;

function findClose(glob: string, open: number, o: string, c: string): number {
  let depth = 0;
  for (let i = open; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '\\') i++;
    else if (ch === o) depth++;
    else if (ch === c && --depth === 0) return i;
  }
  return -1;
}

function classSource(body: string): string {
  let negate = false;
  if (body.startsWith('!') || body.startsWith('^')) {
    negate = true;
    body = body.slice(1);
  }
  const escaped = body.replace(/\\(.)/g, '$1').replace(/[\\\]^]/g, '\\$&');
  return negate ? `[^/${escaped}]` : `[${escaped}]`;
}

function source(glob: string): string {
  let out = '';
  const braces: number[] = [];
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '\\' && i + 1 < glob.length) {
      out += glob[++i]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    } else if (ch === '*') {
      if (glob[i + 1] === '*') {
        const segStart = i === 0 || '/{,'.includes(glob[i - 1]!);
        const next = glob[i + 2];
        i++;
        if (segStart && next === '/') {
          out += '(?:[^/]*/)*';
          i++;
        } else if (segStart && (next === undefined || next === '}' || next === ',')) {
          out += '.*';
        } else {
          out += '[^/]*';
        }
      } else {
        out += '[^/]*';
      }
    } else if (ch === '?') {
      out += '[^/]';
    } else if (ch === '[') {
      // `]` right after `[` (or `[!`) is a literal member of the class
      const from = glob[i + 1] === '!' || glob[i + 1] === '^' ? i + 2 : i + 1;
      const close = glob.indexOf(']', from + 1);
      if (close === -1) out += '\\[';
      else {
        out += classSource(glob.slice(i + 1, close));
        i = close;
      }
    } else if (ch === '{' && findClose(glob, i, '{', '}') !== -1) {
      braces.push(i);
      out += '(?:';
    } else if (ch === ',' && braces.length > 0) {
      out += '|';
    } else if (ch === '}' && braces.length > 0) {
      braces.pop();
      out += ')';
    } else {
      out += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  return out;
}

/** Whole-path matcher: `src/*.ts` matches `src/a.ts`, not `src/x/a.ts`. */
export function globToRegExp(glob: string, opts: { ignoreCase?: boolean } = {}): RegExp {
  return new RegExp(`^${source(glob)}$`, opts.ignoreCase ? 'i' : '');
}

export function hasGlobMeta(s: string): boolean {
  return META.test(s);
}

/** Leading segments without glob syntax (`src/lib/**\/*.ts` → `src/lib`), and the rest. */
export function splitStaticPrefix(glob: string): { prefix: string; rest: string } {
  const segs = glob.split('/');
  let n = 0;
  while (n < segs.length - 1 && !hasGlobMeta(segs[n]!)) n++;
  return { prefix: segs.slice(0, n).join('/'), rest: segs.slice(n).join('/') };
}

/** How deep a walk must go for `glob` to match (Infinity when it has `**`). */
export function globDepth(glob: string): number {
  return glob.includes('**') ? Infinity : glob.split('/').length;
}

export interface RgGlob {
  negated: boolean;
  dirOnly: boolean;
  matches(rel: string, isDir: boolean): boolean;
}

/**
 * ripgrep's `--glob` semantics (gitignore-style): a leading `!` excludes; without a `/` the
 * glob matches the base name at any depth; with one it is anchored at the search root; a
 * trailing `/` matches directories only.
 */
export function compileRgGlob(raw: string, opts: { ignoreCase?: boolean } = {}): RgGlob {
  let glob = raw;
  const negated = glob.startsWith('!');
  if (negated) glob = glob.slice(1);
  const dirOnly = glob.endsWith('/');
  if (dirOnly) glob = glob.slice(0, -1);
  const anchored = glob.includes('/');
  if (glob.startsWith('/')) glob = glob.slice(1);
  const re = globToRegExp(anchored ? glob : `**/${glob}`, opts);
  return { negated, dirOnly, matches: (rel, isDir) => (!dirOnly || isDir) && re.test(rel) };
}

export type OverrideMatch = 'whitelist' | 'ignore' | 'none';

/**
 * ripgrep's override rule: the last glob that matches decides; a file no positive glob matches
 * is ignored when positive globs exist; a directory is only ever excluded by a negated glob.
 * 'none' lets the next filter (file type) decide.
 */
export function rgOverrideMatch(globs: readonly RgGlob[], rel: string, isDir: boolean): OverrideMatch {
  for (let i = globs.length - 1; i >= 0; i--) {
    const g = globs[i]!;
    if (g.matches(rel, isDir)) return g.negated ? 'ignore' : 'whitelist';
  }
  return !isDir && globs.some((g) => !g.negated) ? 'ignore' : 'none';
}
