/**
 * Read a batch's jobs file — JSON Lines (`.jsonl`, one job object per line) or YAML (`.yaml`/`.yml`,
 * a list of job objects) — and validate every job before anything starts. A job is an object of
 * session options plus an optional `id` (default `job-<n>`, n = its position). An error names the
 * file, the line and the field: `jobs.jsonl:12: maxTurns: expected number, received string`.
 * With several models (`submit --model A --model B`) every job runs once per model, as `TASK:MODEL`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { refuseBadOutputSchema } from '../activities/model/output-schema';
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

export interface ReadJobsOptions {
  batchId?: string;
  /** Where relative paths in a job point, and the `cwd` of a job with neither `cwd` nor `workspace` (default: here). */
  cwd?: string;
  platform?: string;
  /** Options given on the command line: a job's own value wins. */
  defaults?: Record<string, unknown>;
  /**
   * `--model`: one is a default like `defaults`; several run every job once per model, with the id
   * `TASK:MODEL` (jobIdFor), and a job may not name its own model.
   */
  models?: string[];
}

export function readJobsFile(file: string, opts: ReadJobsOptions = {}): JobsFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new JobsFileError(file, undefined, undefined, `cannot read: ${(e as Error).message}`);
  }
  const models = opts.models ?? [];
  checkModels(file, models);
  // The model list is part of what was submitted: other models are another batch. Without
  // --model the hash is the file's alone, as before models were listed.
  const identity = models.length ? `${text}\0--model\0${models.join('\0')}` : text;
  const defaultBatchId = `batch-${createHash('sha256').update(identity).digest('hex').slice(0, 12)}`;
  const batchId = opts.batchId ?? defaultBatchId;
  if (!ID_PATTERN.test(batchId)) throw new JobsFileError(file, undefined, 'batch-id', `--batch-id: expected ${ID_RULE}, got '${batchId}'`);
  const raws = /\.ya?ml$/i.test(file) ? yamlJobs(file, text) : jsonlJobs(file, text);
  if (raws.length === 0) throw new JobsFileError(file, undefined, undefined, 'no jobs in the file');
  const cwd = opts.cwd ?? process.cwd();
  const seen = new Map<string, number>();
  const warnings: string[] = [];
  const runs = raws.flatMap((raw, i) =>
    models.length > 1
      ? models.map((model, k) => ({ raw, i, index: i * models.length + k + 1, model }))
      : [{ raw, i, index: i + 1, model: models[0] }],
  );
  const jobs = runs.map(({ raw, i, index, model }) => {
    // Options given on the command line are defaults: a job's own value wins.
    const value = isObject(raw.value) ? { ...opts.defaults, ...raw.value } : raw.value;
    if (isObject(value)) {
      const o = value;
      // Paths in a job are relative to the submitting directory, like `run --cwd`. A job with a
      // workspace gets no default cwd: its folder is made on the tools host (ARCHITECTURE.md#workspaces).
      o.cwd = typeof o.cwd === 'string' ? path.resolve(cwd, o.cwd) : o.cwd === undefined && o.workspace === undefined ? cwd : o.cwd;
      if (typeof o.settingsFile === 'string') o.settingsFile = path.resolve(cwd, o.settingsFile);
      if (Array.isArray(o.additionalDirectories))
        o.additionalDirectories = o.additionalDirectories.map((d) => (typeof d === 'string' ? path.resolve(cwd, d) : d));
      if (isObject(o.workspace)) o.workspace = resolveWorkspacePaths(o.workspace, cwd);
      if (models.length > 1) {
        if (isObject(raw.value) && raw.value.model !== undefined) {
          throw new JobsFileError(
            file,
            raw.lineOf?.('model') ?? raw.line,
            'model',
            `model: not allowed with several --model flags (each job runs once per model); remove it from the job`,
          );
        }
        const taskId = o.id ?? `job-${i + 1}`;
        if (typeof taskId === 'string' && ID_PATTERN.test(taskId)) {
          const id = jobIdFor(taskId, model!);
          if (id.length > 64) {
            throw new JobsFileError(
              file,
              raw.lineOf?.('id') ?? raw.line,
              'id',
              `id: '${id}' is longer than 64 characters (task '${taskId}' with model '${model}'); give the task a shorter id`,
            );
          }
          o.id = id;
        }
        o.model = model;
      } else if (model !== undefined && o.model === undefined) o.model = model;
    }
    let job: BatchJob;
    try {
      job = parseJob(value, { index, batchId, platform: opts.platform ?? process.platform });
      checkJobOutputSchema(job);
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

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Characters a model name may hold in a job id (`/` is written `_`). */
const MODEL_IN_ID = /^[A-Za-z0-9._:/-]+$/;

/** The id of task `taskId` run with `model` in a multi-model batch: `TASK:MODEL`, `/` written `_`. */
/** A job's `outputFormat` schema compiles (Ajv runs here, never in the coordinator workflow that parses jobs too). */
function checkJobOutputSchema(job: BatchJob): void {
  try {
    refuseBadOutputSchema(job.options.outputFormat);
  } catch (e) {
    throw new JobError((e as Error).message.replace(/^invalid session config: /, ''), 'outputFormat.schema');
  }
}

export function jobIdFor(taskId: string, model: string): string {
  return `${taskId}:${model.replace(/\//g, '_')}`;
}

function checkModels(file: string, models: string[]): void {
  const seen = new Set<string>();
  for (const m of models) {
    if (!m) throw new JobsFileError(file, undefined, 'model', '--model: expected a model name, got an empty one');
    if (models.length > 1 && !MODEL_IN_ID.test(m)) {
      throw new JobsFileError(
        file,
        undefined,
        'model',
        `--model '${m}': a job id holds only letters, digits and . _ : - / in a model name`,
      );
    }
    const slug = jobIdFor('', m);
    if (seen.has(slug))
      throw new JobsFileError(file, undefined, 'model', `--model '${m}' is given twice (or as another spelling of the same id)`);
    seen.add(slug);
  }
}

/**
 * A relative `copy` folder, or a `git` repository given as a relative path, points where the job's
 * other relative paths do. URLs (`scheme://…`) and scp-like `host:path` are left as they are.
 */
function resolveWorkspacePaths(w: Record<string, unknown>, base: string): Record<string, unknown> {
  const out = { ...w };
  if (typeof out.copy === 'string' && out.copy !== '') out.copy = path.resolve(base, out.copy);
  if (typeof out.git === 'string' && isLocalGitPath(out.git)) out.git = path.resolve(base, out.git);
  return out;
}

/** Git's own rule: a colon before the first slash makes `host:path` (scp-like); a scheme makes a URL. */
export function isLocalGitPath(s: string): boolean {
  if (s === '' || s.startsWith('-') || /^[a-z][a-z0-9+.-]*:\/\//i.test(s)) return false;
  const colon = s.indexOf(':');
  const slash = s.indexOf('/');
  return colon < 0 || (slash >= 0 && slash < colon);
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
