/**
 * Gitignore-style path patterns of `Read(…)` / `Edit(…)` rules, matched against an absolute path.
 * Pure: the caller passes the path already made absolute and, where it matters, with symlinks
 * resolved (that needs the file system, so an activity on the tools worker does it).
 *
 *   //abs/x   from the filesystem root     ~/x   from the home directory
 *   /x        from the project root        x, ./x, a/b   from cwd
 *
 * As in gitignore, a pattern with no slash except a trailing one (`*.env`, `./.env`) matches a
 * file or directory of that name at any depth below cwd; `*` matches within one path segment and
 * `**` any number of them; a pattern matching a directory matches everything inside it.
 */
import { normalizePath } from '../tools';

export type Match = 'yes' | 'no' | 'unknown';

export interface PathBases {
  cwd?: string;
  /** `/x` patterns start here; defaults to cwd. */
  projectRoot?: string;
  /** `~/x` patterns start here. */
  homeDir?: string;
}

type Resolved = { anchored: string } | { floating: string; base: string } | { missing: string };

export function resolvePathPattern(pattern: string, bases: PathBases): Resolved {
  if (pattern.startsWith('//')) return { anchored: normalizePath(pattern.slice(1)) };
  if (pattern === '~' || pattern.startsWith('~/')) {
    return bases.homeDir ? { anchored: normalizePath(bases.homeDir + pattern.slice(1)) } : { missing: 'the home directory' };
  }
  if (pattern.startsWith('/')) {
    const root = bases.projectRoot ?? bases.cwd;
    return root ? { anchored: normalizePath(root + pattern) } : { missing: 'the project root' };
  }
  if (!bases.cwd) return { missing: 'the working directory' };
  const rel = pattern.startsWith('./') ? pattern.slice(2) : pattern;
  const body = rel.replace(/\/+$/, '');
  if (body !== '' && !body.includes('/') && body !== '..' && body !== '.') return { floating: body, base: normalizePath(bases.cwd) };
  return { anchored: normalizePath(`${bases.cwd}/${rel}`) };
}

/**
 * Does `absPath` (absolute, normalised) match the rule's pattern? `unknown` when the pattern
 * needs a base directory the caller did not give.
 */
export function matchPathPattern(pattern: string, absPath: string, bases: PathBases): Match {
  const resolved = resolvePathPattern(pattern, bases);
  if ('missing' in resolved) return 'unknown';
  const path = normalizePath(absPath);
  if ('anchored' in resolved) {
    const re = globRegex(resolved.anchored);
    return selfAndAncestors(path).some((p) => re.test(p)) ? 'yes' : 'no';
  }
  if (!isInside(path, resolved.base) || path === resolved.base) return 'no';
  const re = globRegex(resolved.floating);
  const rest = resolved.base === '/' ? path.slice(1) : path.slice(resolved.base.length + 1);
  return rest.split('/').some((segment) => re.test(segment)) ? 'yes' : 'no';
}

/** Why a pattern could not be checked (for messages), or undefined when it can be. */
export function missingBase(pattern: string, bases: PathBases): string | undefined {
  const resolved = resolvePathPattern(pattern, bases);
  return 'missing' in resolved ? resolved.missing : undefined;
}

export function isInside(child: string, root: string): boolean {
  if (root === '/') return child.startsWith('/');
  return child === root || child.startsWith(`${root}/`);
}

/** An input path made absolute against cwd and normalised (`..` removed; symlinks untouched). */
export function absolutePath(p: string, cwd: string | undefined): string | undefined {
  if (p.startsWith('/')) return normalizePath(p);
  return cwd ? normalizePath(`${cwd}/${p}`) : undefined;
}

function selfAndAncestors(path: string): string[] {
  const out = [path];
  for (let p = path; p !== '/' && p !== '';) {
    p = p.slice(0, p.lastIndexOf('/')) || '/';
    out.push(p);
  }
  return out;
}

const compiled = new Map<string, RegExp>();

/** Glob → RegExp: `**` any depth, `*` and `?` within a segment, `[…]` a character class. */
export function globRegex(glob: string): RegExp {
  let re = compiled.get(glob);
  if (re) return re;
  let src = '';
  for (let i = 0; i < glob.length;) {
    if (glob.startsWith('**/', i)) {
      src += '(?:.*/)?';
      i += 3;
    } else if (glob.startsWith('/**', i) && i + 3 === glob.length) {
      src += '(?:/.*)?';
      i += 3;
    } else if (glob.startsWith('**', i)) {
      src += '.*';
      i += 2;
    } else {
      const c = glob[i]!;
      const close = c === '[' ? glob.indexOf(']', i + 2) : -1;
      if (c === '*') src += '[^/]*';
      else if (c === '?') src += '[^/]';
      else if (close > 0) {
        const inner = glob.slice(i + 1, close);
        const negated = inner.startsWith('!') || inner.startsWith('^');
        src += `[${negated ? '^' : ''}${(negated ? inner.slice(1) : inner).replace(/[\\\]]/g, '\\$&')}]`;
        i = close;
      } else if (c === '\\' && i + 1 < glob.length) src += escapeChar(glob[++i]!);
      else src += escapeChar(c);
      i++;
    }
  }
  re = new RegExp(`^${src}$`);
  compiled.set(glob, re);
  return re;
}

function escapeChar(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}
