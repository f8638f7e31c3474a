/**
 * Read a batch's jobs file — JSON Lines (`.jsonl`, one job object per line) or YAML (`.yaml`/`.yml`,
 * a list of job objects) — and validate every job before anything starts. A job is an object of
 * session options plus an optional `id` (default `job-<n>`, n = its position). An error names the
 * file, the line and the field: `jobs.jsonl:12: maxTurns: expected number, received string`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { ID_PATTERN, ID_RULE, JobError, parseJob, type BatchJob } from '../shared/batch';
import { droppedEnvWarning } from '../shared/secret-env';

/** A jobs file that does not validate; nothing was started. */
export class JobsFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly field: string | undefined,
    message: string,
  ) {
    super(`${file}${line !== undefined ? `:${line}` : ''}: ${message}`);
    this.name = 'JobsFileError';
  }
}

export interface JobsFile {
  jobs: BatchJob[];
  /** Identifies the set of jobs (their ids); a re-submission must match it. */
  fingerprint: string;
  /** Default batch id: derived from the file's content, so re-running the same command finds the same batch. */
  defaultBatchId: string;
  /** `file:line: env: dropped …` for each job whose `env` lost entries (names only); each session's stream says it too. */
  warnings: string[];
}

interface RawJob {
  value: unknown;
  line: number;
  /** Line of a field, when the format knows it. */
  lineOf?: (field: string) => number | undefined;
}

export function readJobsFile(
  file: string,
  opts: { batchId?: string; cwd?: string; platform?: string; defaults?: Record<string, unknown> } = {},
): JobsFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new JobsFileError(file, undefined, undefined, `cannot read: ${(e as Error).message}`);
  }
  const defaultBatchId = `batch-${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
  const batchId = opts.batchId ?? defaultBatchId;
  if (!ID_PATTERN.test(batchId)) throw new JobsFileError(file, undefined, 'batch-id', `--batch-id: expected ${ID_RULE}, got '${batchId}'`);
  const raws = /\.ya?ml$/i.test(file) ? yamlJobs(file, text) : jsonlJobs(file, text);
  if (raws.length === 0) throw new JobsFileError(file, undefined, undefined, 'no jobs in the file');
  const cwd = opts.cwd ?? process.cwd();
  const seen = new Map<string, number>();
  const warnings: string[] = [];
  const jobs = raws.map((raw, i) => {
    // Options given on the command line are defaults: a job's own value wins.
    const value = raw.value && typeof raw.value === 'object' && !Array.isArray(raw.value) ? { ...opts.defaults, ...raw.value } : raw.value;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const o = value as Record<string, unknown>;
      // Paths in a job are relative to the submitting directory, like `run --cwd`.
      o.cwd = typeof o.cwd === 'string' ? path.resolve(cwd, o.cwd) : o.cwd === undefined ? cwd : o.cwd;
      if (typeof o.settingsFile === 'string') o.settingsFile = path.resolve(cwd, o.settingsFile);
      if (Array.isArray(o.additionalDirectories))
        o.additionalDirectories = o.additionalDirectories.map((d) => (typeof d === 'string' ? path.resolve(cwd, d) : d));
    }
    let job: BatchJob;
    try {
      job = parseJob(value, { index: i + 1, batchId, platform: opts.platform ?? process.platform });
    } catch (e) {
      if (!(e instanceof JobError)) throw e;
      const top = e.field.split('.')[0]!;
      throw new JobsFileError(file, raw.lineOf?.(top) ?? raw.line, e.field, e.message);
    }
    const dup = seen.get(job.id);
    if (dup !== undefined)
      throw new JobsFileError(file, raw.lineOf?.('id') ?? raw.line, 'id', `id: '${job.id}' is already used by the job at line ${dup}`);
    seen.set(job.id, raw.line);
    const dropped = job.options.envDropped;
    if (dropped?.length) warnings.push(`${file}:${raw.lineOf?.('env') ?? raw.line}: ${droppedEnvWarning(dropped)}`);
    return job;
  });
  const ids = jobs.map((j) => j.id).sort();
  const fingerprint = createHash('sha256').update(ids.join('\n')).digest('hex');
  return { jobs, fingerprint, defaultBatchId, warnings };
}

function jsonlJobs(file: string, text: string): RawJob[] {
  const out: RawJob[] = [];
  text.split('\n').forEach((line, i) => {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('//') || trimmed.startsWith('#')) return;
    try {
      out.push({ value: JSON.parse(trimmed), line: i + 1 });
    } catch (e) {
      throw new JobsFileError(file, i + 1, '(root)', `invalid JSON: ${(e as Error).message}`);
    }
  });
  return out;
}

function yamlJobs(file: string, text: string): RawJob[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const err = doc.errors[0];
  if (err) throw new JobsFileError(file, err.linePos?.[0].line, '(root)', `invalid YAML: ${err.message.split('\n')[0]}`);
  if (doc.contents === null) return [];
  if (!isSeq(doc.contents)) throw new JobsFileError(file, 1, '(root)', 'expected a list of jobs (`- prompt: …`)');
  const lineAt = (node: Node | null | undefined) => (node?.range ? lines.linePos(node.range[0]).line : undefined);
  const values = doc.toJS() as unknown[];
  return doc.contents.items.map((item, i) => {
    const node = item as Node;
    return {
      value: values[i],
      line: lineAt(node) ?? 1,
      lineOf: (field: string) => {
        if (!isMap(node)) return undefined;
        const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === field);
        return lineAt(pair?.key as Node | undefined);
      },
    };
  });
}
