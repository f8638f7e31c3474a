/** Argument parsing and output helpers shared by the CLI's commands. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DurableAgentClient } from '../client/client';

/** Bad input: printed with its usage, exit code 2, nothing started. */
export class UsageError extends Error {}

export const EXIT = { ok: 0, error: 1, usage: 2 } as const;

type HelpFlag = { help: { type: 'boolean'; short: 'h' } };
/** Named, so the compiled `.d.ts` can say it (node:util does not export the types it is built from). */
export type Parsed<T extends NonNullable<ParseArgsConfig['options']>> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T & HelpFlag; allowPositionals: true; strict: true }>
>;

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, usage: string): Parsed<T> {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n\n${usage}`);
  }
}

export const list = (s: string | undefined): string[] | undefined =>
  s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : undefined;

export function num(s: string | undefined, flag: string, opts: { integer?: boolean; min?: number } = {}): number | undefined {
  if (s === undefined) return undefined;
  const n = Number(s);
  const bad = s.trim() === '' || !Number.isFinite(n) || (opts.integer && !Number.isInteger(n)) || (opts.min !== undefined && n < opts.min);
  if (bad)
    throw new UsageError(
      `--${flag}: expected ${opts.integer ? 'an integer' : 'a number'}${opts.min !== undefined ? ` ≥ ${opts.min}` : ''}, got '${s}'`,
    );
  return n;
}

/** Connect from the environment (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_PROFILE, …), run, close. */
export async function withClient<T>(fn: (c: DurableAgentClient) => Promise<T>): Promise<T> {
  const client = await DurableAgentClient.connect();
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

export const out = (line: string): void => void process.stdout.write(`${line}\n`);
export const err = (line: string): void => void process.stderr.write(`${line}\n`);
export const printJson = (x: unknown): void => out(JSON.stringify(x));

/** Rows as aligned columns, two spaces apart (the first row is the header). */
export function printTable(table: string[][]): void {
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table)
    out(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
}

/** Read all of stdin (for a prompt piped in). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export const usd = (x: number | undefined): string => (x === undefined ? '-' : `$${x.toFixed(4)}`);
