/**
 * Benchmark 13 — what checking a Bash call against rules on a real parse costs
 * (ARCHITECTURE.md#bash-rules-on-a-real-parse): the parser alone (tree-sitter-bash through
 * web-tree-sitter, per command line), and a session's Bash calls with the `inspectToolCall`
 * activity before each (dontAsk + `Bash(echo:*)`) beside the same calls needing no facts
 * (bypassPermissions without rules), on one dev server, sessions alternating, the first round a
 * warm-up left out.
 *
 *   npx tsx bench/permission-check.ts [--rounds 5] [--calls 40] [--parses 200]
 *
 * A call's cost is the gap between consecutive `runTool` schedules in one turn (the calls of a
 * turn run one after another: Bash is not read-only), so it holds the inspect activity, the
 * decision, the tool and the dispatch waits between them.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { turn } from '../src/testing/scripted-model';
import { analyseBash } from '../src/activities/permissions';
import { DENY_CORPUS, SMUGGLE_CORPUS } from '../test/permissions/bypass-corpus';
import { gaps, load, machine, median, ms, percentile, scheduledTimes, startBenchStack, table } from './lib';

const TYPICAL = [
  'npm test',
  'git status && git diff --stat',
  'ls -la src | grep -v node_modules > files.txt',
  'timeout 60 npx jest test/unit --silent 2>&1 | tail -20',
  'for f in $(git ls-files "*.ts"); do wc -l "$f"; done | sort -n | tail',
  "cat <<'EOF' > notes.md\n# Notes\nsome text with $dollars and `ticks`\nEOF",
];

async function parseCost(reps: number): Promise<string[][]> {
  const lines = [...TYPICAL, ...DENY_CORPUS, ...SMUGGLE_CORPUS].map((c) => c.replaceAll('{V}', 'victim'));
  const t0 = performance.now();
  await analyseBash('true'); // loads the WebAssembly parser
  const load = performance.now() - t0;
  const per: number[] = [];
  for (let r = 0; r < reps; r++) {
    for (const line of lines) {
      const s = performance.now();
      await analyseBash(line);
      per.push(performance.now() - s);
    }
  }
  return [
    ['parser', 'value'],
    ['first call (loads the parser)', ms(load)],
    [`per line, median of ${per.length} (${lines.length} lines × ${reps})`, ms(median(per))],
    ['per line, p95', ms(percentile(per, 95))],
  ];
}

export async function permissionCheck(opts: { rounds: number; calls: number; parses: number }): Promise<void> {
  const loadBefore = load();
  console.log(`# Bash permission check — ${machine()}; load before: ${loadBefore}`);
  console.log(table(await parseCost(opts.parses)));

  const { stack, model, dir } = await startBenchStack({ worker: {} });
  const ws = path.join(dir, 'ws');
  mkdirSync(ws);
  const calls = Array.from({ length: opts.calls }, (_, i) => ({
    id: `c${i}`,
    name: 'Bash',
    arguments: { command: `echo ${i} >> out.txt` },
  }));
  model.addScenario({ name: 'calls', turns: [turn.tools(calls), turn.text('done')] });
  const variants = {
    'no facts needed (bypassPermissions, no rules)': { permissionMode: 'bypassPermissions' as const },
    'inspected (dontAsk, Bash(echo:*))': { permissionMode: 'dontAsk' as const, allowedTools: ['Bash(echo:*)'] },
  };
  const perCall: Record<string, number[]> = {};
  try {
    for (let round = 0; round <= opts.rounds; round++) {
      for (const [name, options] of Object.entries(variants)) {
        const h = await stack.client.start({ prompt: '[scenario:calls] echo', cwd: ws, ...options });
        const result = await h.result();
        if (result.subtype !== 'success') throw new Error(`${name}: session ended ${result.subtype}`);
        const events = (await h.workflow.fetchHistory()).events ?? [];
        const denied = result.permission_denials?.length ?? 0;
        if (denied > 0) throw new Error(`${name}: ${denied} calls denied`);
        if (round > 0) {
          (perCall[name] ??= []).push(...gaps(scheduledTimes(events, 'runTool')));
          const parses = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
          if (name.startsWith('inspected') && parses < opts.calls)
            throw new Error(`${name}: ${parses} parses recorded for ${opts.calls} calls`);
        }
        model.reset();
      }
    }
  } finally {
    await stack.close();
  }
  const [plain, checked] = Object.keys(variants).map((k) => median(perCall[k] ?? []));
  console.log(
    table([
      ['Bash call in a session', 'median', 'p95', 'calls'],
      ...Object.keys(variants).map((k) => [k, ms(median(perCall[k]!)), ms(percentile(perCall[k]!, 95)), perCall[k]!.length]),
      ['added per call (median difference)', ms(checked! - plain!), '', ''],
    ]),
  );
  console.log(`load after: ${load()}`);
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '5' },
      calls: { type: 'string', default: '40' },
      parses: { type: 'string', default: '200' },
    },
  });
  permissionCheck({ rounds: Number(values.rounds), calls: Number(values.calls), parses: Number(values.parses) }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
