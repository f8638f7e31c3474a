/**
 * Grep through ripgrep. Content mode uses `--json` and our own printer, so long lines are cut
 * the same way, the output is the same as the JS fallback's, and rg can be stopped as soon as
 * enough lines are in.
 */
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { ToolOps } from './ops';
import { RG_TYPES, type GrepHits, type GrepLine, type GrepQuery, type GrepRun } from './grep-types';

function ripgrepArgs(q: GrepQuery): string[] {
  const args = ['--no-config', '--hidden', '--no-ignore', '--sort', 'path'];
  for (const g of q.globs) args.push('--glob', g);
  if (q.ignoreCase) args.push('-i');
  if (q.multiline) args.push('-U', '--multiline-dotall');
  if (q.type !== undefined) {
    // Pin the common types to our table so results do not depend on the installed rg's version.
    const globs = RG_TYPES[q.type];
    if (globs) args.push('--type-clear', q.type, ...globs.flatMap((g) => ['--type-add', `${q.type}:${g}`]));
    args.push('--type', q.type);
  }
  if (q.mode === 'files_with_matches') args.push('--files-with-matches');
  else if (q.mode === 'count') args.push('--count', '--with-filename');
  else args.push('--json', '-A', String(q.after), '-B', String(q.before));
  args.push('-e', q.pattern, '--', q.root);
  return args;
}

type JsonText = { text?: string; bytes?: string };
const jsonText = (t: JsonText | undefined) => t?.text ?? (t?.bytes ? Buffer.from(t.bytes, 'base64').toString('utf8') : '');

export function runRipgrep(rg: string, q: GrepQuery, ops: ToolOps): Promise<GrepRun> {
  return new Promise((resolve) => {
    const child = ops.spawn(rg, ripgrepArgs(q), {
      // Globs with a '/' are anchored at rg's working directory: make that the search root.
      cwd: q.rootIsDir ? q.root : path.dirname(q.root),
      env: ops.baseEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const files: string[] = [];
    const counts: { file: string; count: number }[] = [];
    const content: { file: string; lines: GrepLine[] }[] = [];
    let entries = 0;
    let stopped = false;
    let stderr = '';
    const stop = () => {
      stopped = true;
      child.kill('SIGKILL');
    };
    const onLine = (line: string) => {
      if (stopped || !line) return;
      if (q.mode === 'files_with_matches') files.push(line);
      else if (q.mode === 'count') {
        const at = line.lastIndexOf(':');
        counts.push({ file: line.slice(0, at), count: Number(line.slice(at + 1)) });
      } else {
        const msg = JSON.parse(line) as { type: string; data: { path?: JsonText; lines?: JsonText; line_number?: number } };
        if (msg.type !== 'match' && msg.type !== 'context') return;
        const file = jsonText(msg.data.path);
        let group = content[content.length - 1];
        if (group?.file !== file) content.push((group = { file, lines: [] }));
        const text = jsonText(msg.data.lines).replace(/\n$/, '');
        text.split('\n').forEach((t, k) => {
          group.lines.push({ n: (msg.data.line_number ?? 0) + k, text: t, match: msg.type === 'match' });
        });
        entries += text.split('\n').length;
        if (entries > q.maxEntries) stop();
      }
    };
    const decoder = new StringDecoder('utf8');
    let rest = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      const parts = (rest + decoder.write(chunk)).split('\n');
      rest = parts.pop()!;
      parts.forEach(onLine);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 4_000) stderr += chunk.toString('utf8');
    });
    const onAbort = () => stop();
    q.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      q.signal.removeEventListener('abort', onAbort);
      resolve({ ok: false, error: `Failed to run ripgrep: ${err.message}` });
    });
    child.on('close', (code) => {
      q.signal.removeEventListener('abort', onAbort);
      onLine(rest + decoder.end());
      const anything = files.length + counts.length + content.length > 0;
      // Exit 2 with results means some files could not be read: the results still stand.
      if (!stopped && code === 2 && !anything) {
        resolve({ ok: false, error: stderr.trim() || 'ripgrep failed (exit code 2)' });
        return;
      }
      const hits: GrepHits =
        q.mode === 'content'
          ? { mode: 'content', files: content, more: stopped && !q.signal.aborted }
          : q.mode === 'count'
            ? { mode: 'count', counts }
            : { mode: 'files_with_matches', files };
      resolve({ ok: true, hits });
    });
  });
}
