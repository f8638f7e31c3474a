/**
 * Grep without ripgrep: the same file selection (hidden files, no ignore files, VCS dirs and
 * symlinks skipped, binary files skipped), the same order (`--sort path`) and the same line
 * semantics, with JavaScript regular expressions standing in for Rust's.
 */
import { compileRgGlob, globToRegExp, rgOverrideMatch } from './glob-match';
import type { ToolFs } from './ops';
import { errorMessage } from './types';
import { RG_TYPES, type GrepHits, type GrepLine, type GrepQuery, type GrepRun } from './grep-types';
import { walkFiles } from './walk';

/** The Rust-regex spellings a model uses most, in JS: `(?i)` prefix and `(?P<name>`. */
function toJsRegExp(pattern: string, flags: string): RegExp {
  let p = pattern;
  if (p.startsWith('(?i)')) {
    p = p.slice(4);
    if (!flags.includes('i')) flags += 'i';
  }
  return new RegExp(p.replace(/\(\?P</g, '(?<'), flags);
}

interface FileResult {
  count: number;
  lines: GrepLine[];
}

function searchText(text: string, q: GrepQuery, re: RegExp): FileResult | null {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const matched = new Set<number>();
  let count = 0;
  if (q.multiline) {
    const starts: number[] = [];
    for (let i = 0, at = 0; i < lines.length; at += lines[i]!.length + 1, i++) starts.push(at);
    const lineOf = (offset: number) => {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= offset) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      count++;
      const last = lineOf(m.index + m[0].length - 1);
      for (let i = lineOf(m.index); i <= last; i++) matched.add(i);
    }
  } else {
    lines.forEach((line, i) => {
      if (re.test(line)) matched.add(i);
    });
    count = matched.size;
  }
  if (matched.size === 0) return null;
  if (q.mode !== 'content') return { count, lines: [] };
  const shown = new Set<number>();
  for (const i of matched) {
    for (let j = Math.max(0, i - q.before); j <= Math.min(lines.length - 1, i + q.after); j++) shown.add(j);
  }
  const out = [...shown].sort((a, b) => a - b).map((i) => ({ n: i + 1, text: lines[i]!, match: matched.has(i) }));
  return { count, lines: out };
}

function joinRel(root: string, rel: string): string {
  return root === '/' ? `/${rel}` : `${root}/${rel}`;
}

export async function runJsGrep(fs: ToolFs, q: GrepQuery): Promise<GrepRun> {
  let re: RegExp;
  try {
    re = toJsRegExp(q.pattern, (q.ignoreCase ? 'i' : '') + (q.multiline ? 'gms' : ''));
  } catch (err) {
    return { ok: false, error: `regex parse error: ${errorMessage(err)}` };
  }
  let typeRes: RegExp[] | undefined;
  if (q.type !== undefined) {
    const globs = RG_TYPES[q.type];
    if (!globs) return { ok: false, error: `unrecognized file type: ${q.type}` };
    typeRes = globs.map((g) => globToRegExp(g));
  }
  const overrides = q.globs.map((g) => compileRgGlob(g));
  const fileAllowed = (rel: string) => {
    const o = rgOverrideMatch(overrides, rel, false);
    if (o !== 'none') return o === 'whitelist';
    const base = rel.slice(rel.lastIndexOf('/') + 1);
    return !typeRes || typeRes.some((t) => t.test(base));
  };

  async function* candidates(): AsyncGenerator<string> {
    if (!q.rootIsDir) {
      yield q.root; // an explicitly named file is searched whatever the filters say (as rg does)
      return;
    }
    for await (const e of walkFiles({
      fs,
      root: q.root,
      skipDir: (rel) => rgOverrideMatch(overrides, rel, true) === 'ignore' || q.excluded?.(joinRel(q.root, rel)) === true,
      signal: q.signal,
      onProgress: q.onProgress,
    })) {
      // Files are left to the check of every result (grep.ts), which counts what it leaves out.
      if (fileAllowed(e.rel)) yield e.abs;
    }
  }

  const files: string[] = [];
  const counts: { file: string; count: number }[] = [];
  const content: { file: string; lines: GrepLine[] }[] = [];
  let entries = 0;
  let more = false;
  for await (const file of candidates()) {
    let buf: Buffer;
    try {
      buf = await fs.readFile(file);
    } catch {
      continue;
    }
    if (buf.includes(0)) continue; // binary
    const found = searchText(buf.toString('utf8'), q, re);
    if (!found) continue;
    files.push(file);
    counts.push({ file, count: found.count });
    if (q.mode === 'content') {
      content.push({ file, lines: found.lines });
      entries += found.lines.length;
      if (entries > q.maxEntries) {
        more = true;
        break;
      }
    }
  }
  const hits: GrepHits =
    q.mode === 'content'
      ? { mode: 'content', files: content, more }
      : q.mode === 'count'
        ? { mode: 'count', counts }
        : { mode: 'files_with_matches', files };
  return { ok: true, hits };
}
