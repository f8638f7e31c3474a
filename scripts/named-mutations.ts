/**
 * Re-checks, by hand-made mutations, that the behaviours this project exists for are guarded by
 * tests (docs/TESTING.md#named-mutations). Each mutation deletes or disables one behaviour in the
 * source, runs the tests that claim to cover it, and expects them to FAIL; the source is restored
 * afterwards whatever happens. Run it in a checkout nobody else is using (it edits `src/`):
 *
 *   npx tsx scripts/named-mutations.ts            # all of them (≈ 15 min on 2 cores)
 *   npx tsx scripts/named-mutations.ts cost todos # only those whose name contains a word given
 *
 * Exit code 1 when a mutation survives (its tests pass) or a baseline run fails.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface Mutation {
  name: string;
  file: string;
  /** Text that must occur exactly once in the file. */
  from: string;
  to: string;
  tests: string[];
  /** A line put at the top of the mutated file (an import the mutation needs). */
  prepend?: string;
}

const CARRY_TEST = 'test/session/continue-as-new-state.test.ts';

/** Reset one field of the carried state (`group.field` for a grouped one) to what a fresh session has, on the way into the new run. */
function resetOnContinueAsNew(field: string): Mutation {
  const [group, inner] = field.split('.');
  const reset = inner ? `${group}: { ...state.${group}, ${inner}: fresh.${field} }` : `${field}: fresh.${field}`;
  return {
    name: `continue-as-new resets ${field}`,
    file: 'src/workflows/session/continue-as-new.ts',
    from: 'const carried: CarriedState = { state, recentEvents',
    to: `const fresh = initialState(state.config, state.sessionId, state.startedAtMs);\n  const carried: CarriedState = { state: { ...state, ${reset} }, recentEvents`,
    tests: [CARRY_TEST],
    prepend: "import { initialState } from './state';",
  };
}

const CARRIED_FIELDS = [
  'spend.costUsd',
  'spend.usage',
  'spend.perModel',
  'model',
  'permissionMode',
  'fileStamps',
  'todos',
  'context.loopHistory',
  'permissionDenials',
];

const MUTATIONS: Mutation[] = [
  ...CARRIED_FIELDS.map(resetOnContinueAsNew),
  {
    name: 'model call ignores cancellation (no abort listener)',
    file: 'src/activities/heartbeat.ts',
    from: "ctx.cancellationSignal.addEventListener('abort', onCancel);",
    to: '// (mutation) no cancellation listener',
    tests: ['test/session/provider-calls.test.ts'],
  },
  {
    name: 'Bash attempt journal unwired (no attempt key)',
    file: 'src/activities/index.ts',
    from: 'attemptKey: ctx.info.workflowExecution',
    to: 'attemptKey: undefined && ctx.info.workflowExecution',
    tests: ['test/chaos/bash-once.test.ts'],
  },
  {
    name: 'server-suggested continue-as-new ignored',
    file: 'src/workflows/session/continue-as-new.ts',
    from: 'return workflowInfo().continueAsNewSuggested ||',
    to: 'return false ||',
    tests: ['test/session/server-limits.test.ts'],
  },
  {
    name: 'continue-as-new payload guard removed',
    file: 'src/workflows/session/context/index.ts',
    from: 'if (jsonBytes(state) > MAX_PAYLOAD_BYTES) state.messages = trimOldToolResults(',
    to: 'if (false) state.messages = trimOldToolResults(',
    tests: ['test/session/server-limits.test.ts'],
  },
  {
    name: 'budget reached only past the limit (>= becomes >)',
    file: 'src/workflows/session/turn.ts',
    from: 'f.costUsd >= f.maxBudgetUsd',
    to: 'f.costUsd > f.maxBudgetUsd',
    tests: ['test/unit/turn-exits.test.ts', 'test/unit/turn.test.ts'],
  },
  {
    name: 'sandbox stack formatter left out (SDK captures a stack per promise)',
    file: 'src/workflows/stack-traces.ts',
    from: 'Error.prepareStackTrace = prepareWorkflowStackTrace;',
    to: '// (mutation) the SDK formats sandbox stacks',
    tests: ['test/session/workflow-stack-traces.test.ts'],
  },
  {
    name: 'start search attributes ignored (the first reply writes them again)',
    file: 'src/workflows/session/state.ts',
    from: 'return config.searchAttributes && config.searchAttributesAtStart',
    to: 'return false && config.searchAttributesAtStart',
    tests: ['test/client/client.test.ts'],
  },
  {
    name: 'setup in one call ignored (two set-up activities)',
    file: 'src/workflows/session/session-start.ts',
    from: '  if (cfg.setupInOneCall) {',
    to: '  if (false as boolean) {',
    tests: ['test/client/client.test.ts'],
  },
  {
    name: 'setup at once ignored (tools listed, then settings loaded, behind the patch)',
    file: 'src/workflows/session/session-start.ts',
    from: '  if (cfg.setupAtOnce) {',
    to: '  if (false as boolean) {',
    tests: ['test/client/client.test.ts'],
  },
  {
    name: 'model call heartbeats not deferred (every call beats at once)',
    file: 'src/activities/heartbeat.ts',
    from: '    this.open = !timeout;',
    to: '    this.open = true;',
    tests: ['test/unit/stream-heartbeats.test.ts', 'test/session/live-tokens.test.ts'],
  },
  {
    name: 'eager dispatch off in the dev server (model calls through matching)',
    file: 'src/server/dev-server.ts',
    from: "  'system.enableActivityEagerExecution': true,",
    to: "  'system.enableActivityEagerExecution': false,",
    tests: ['test/session/model-queue.test.ts'],
  },
];

const root = path.resolve(__dirname, '..');

const logDir = path.join(root, 'reports', 'named-mutations');

/** Runs the tests; the whole output goes to `reports/named-mutations/<label>.log`. */
function jest(tests: string[], label: string): { ok: boolean; seconds: number; failed: string[]; why: string } {
  const started = Date.now();
  const r = spawnSync('npx', ['jest', '--ci', ...tests], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const out = `${r.stdout}\n${r.stderr}`;
  mkdirSync(logDir, { recursive: true });
  writeFileSync(path.join(logDir, `${label.replace(/[^a-z0-9]+/gi, '-')}.log`), out);
  const failed = [...out.matchAll(/^\s+● (.+)$/gm)].map((m) => m[1]!.trim()).filter((t, i, all) => all.indexOf(t) === i);
  // The first assertion that failed, so a reader sees the mutation was caught for the right reason.
  const why = (out.match(/^\s+(?:expect\(.*|Expected.*|Received.*|Error: .*|Thrown: .*)$/gm) ?? [])
    .slice(0, 3)
    .map((l) => l.trim())
    .join(' | ');
  return { ok: r.status === 0, seconds: Math.round((Date.now() - started) / 1000), failed, why };
}

function withMutation<T>(m: Mutation, run: () => T): T {
  const file = path.join(root, m.file);
  const original = readFileSync(file, 'utf8');
  const count = original.split(m.from).length - 1;
  if (count !== 1) throw new Error(`${m.name}: expected "${m.from}" once in ${m.file}, found ${count} times; update this script`);
  const replaced = original.replace(m.from, m.to);
  const mutated = m.prepend ? `${m.prepend}\n${replaced}` : replaced;
  const restore = () => writeFileSync(file, original);
  // Stopped with Ctrl-C or a kill: the source is put back before exiting (once the running jest
  // returns: spawnSync holds the event loop until then).
  const onSignal = () => {
    restore();
    process.exit(130);
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  writeFileSync(file, mutated);
  try {
    return run();
  } finally {
    restore();
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

function main(): void {
  const words = process.argv.slice(2);
  const chosen = words.length ? MUTATIONS.filter((m) => words.some((w) => m.name.includes(w))) : MUTATIONS;
  if (chosen.length === 0) throw new Error(`no mutation matches ${words.join(', ')}`);
  let bad = 0;
  const baselines = [...new Set(chosen.flatMap((m) => m.tests))];
  console.log(`[named-mutations] baseline: ${baselines.join(' ')}`);
  const base = jest(baselines, 'baseline');
  console.log(
    `[named-mutations] baseline ${base.ok ? 'passes' : 'FAILS'} (${base.seconds} s)${base.failed.length ? `: ${base.failed.join('; ')}` : ''}`,
  );
  if (!base.ok) process.exit(1);
  const rows: string[] = [];
  for (const m of chosen) {
    const r = withMutation(m, () => jest(m.tests, m.name));
    const verdict = r.ok ? 'SURVIVED' : 'killed';
    if (r.ok) bad++;
    const line = `${verdict.padEnd(8)}  ${m.name}  →  ${m.tests.join(', ')} (${r.seconds} s)${r.failed.length ? `; failing: ${r.failed.join('; ')}` : ''}${r.why ? `\n          ${r.why}` : ''}`;
    console.log(`[named-mutations] ${line}`);
    rows.push(line);
  }
  console.log(`\n${rows.join('\n')}\n\n${chosen.length - bad} of ${chosen.length} mutations killed`);
  process.exit(bad ? 1 : 0);
}

main();
