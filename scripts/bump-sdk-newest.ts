/**
 * Moves the `claude-agent-sdk-newest` dev dependency — an npm alias of
 * `@anthropic-ai/claude-agent-sdk`, the second SDK version the type-conformance tests run against
 * (the first is the pinned `@anthropic-ai/claude-agent-sdk`) — to the newest published version,
 * then checks our SDK-typed surface against it and prints what broke:
 *
 *   npx tsx scripts/bump-sdk-newest.ts            # the newest (`npm view @anthropic-ai/claude-agent-sdk version`)
 *   npx tsx scripts/bump-sdk-newest.ts 0.3.333    # that version
 *
 * It installs the alias (`npm install -D --save-exact`, then scripts/lockfile-platforms.mjs),
 * prints what changed between the old and the new version in what we mirror (message
 * `type`/`subtype`s, `Options` keys, `Query` members, hook events), and compiles
 * test/types/sdk-conformance.ts against it (test/types/compile-conformance.ts). Exit status 0: it
 * conforms; 1: it does not, and the errors are printed (the bump stays in package.json, to be fixed
 * on top of; `git checkout package.json package-lock.json && npm ci` undoes it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { compileConformance, formatErrors, NEWEST_ALIAS, ROOT, sdksUnderTest } from '../test/types/compile-conformance';

const SDK = '@anthropic-ai/claude-agent-sdk';

function run(cmd: string, args: string[], capture = false): string {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', stdio: capture ? ['ignore', 'pipe', 'inherit'] : 'inherit' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
  return capture ? r.stdout.trim() : '';
}

/** What we mirror of one installed SDK version, read with the compiler from its `.d.ts`. */
interface Surface {
  version: string;
  messages: Set<string>;
  options: Set<string>;
  /** Each member's type, in full (to compare) and as the compiler abbreviates it (to print). */
  query: Map<string, { full: string; shown: string }>;
  hookEvents: Set<string>;
}

function surface(dependency: string): Surface | undefined {
  const dir = path.join(ROOT, 'node_modules', dependency);
  if (!existsSync(path.join(dir, 'package.json'))) return undefined;
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string; types: string };
  const file = path.join(dir, pkg.types);
  const program = ts.createProgram([file], { noEmit: true, skipLibCheck: true, strict: true, types: [] });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  const exported = (name: string) => {
    const s = checker.getExportsOfModule(module).find((e) => e.name === name);
    return s && checker.getDeclaredTypeOfSymbol(s);
  };
  const literals = (t: ts.Type | undefined): string[] =>
    !t ? ['-'] : t.isUnion() ? t.types.flatMap(literals) : t.isStringLiteral() ? [t.value] : [checker.typeToString(t)];
  const prop = (t: ts.Type, name: string) => {
    const p = t.getProperty(name);
    return p && checker.getTypeOfSymbol(p);
  };
  const members = (t: ts.Type | undefined) => (t?.isUnion() ? t.types : t ? [t] : []);
  const messages = new Set(
    members(exported('SDKMessage')).flatMap((m) =>
      literals(prop(m, 'type')).flatMap((type) => literals(prop(m, 'subtype')).map((sub) => `${type}/${sub}`)),
    ),
  );
  const options = new Set(
    exported('Options')
      ?.getProperties()
      .map((p) => p.name),
  );
  const query = new Map(
    (exported('Query')?.getProperties() ?? [])
      .filter((p) => !p.name.startsWith('__@'))
      .map((p) => {
        const t = checker.getTypeOfSymbol(p);
        return [p.name, { full: checker.typeToString(t, undefined, ts.TypeFormatFlags.NoTruncation), shown: checker.typeToString(t) }];
      }),
  );
  return { version: pkg.version, messages, options, query, hookEvents: new Set(literals(exported('HookEvent'))) };
}

function printChanges(before: Surface, after: Surface): void {
  console.log(`\nChanged from ${before.version} to ${after.version}:`);
  let any = false;
  const sets = (label: string, a: Set<string>, b: Set<string>) => {
    const added = [...b].filter((x) => !a.has(x));
    const removed = [...a].filter((x) => !b.has(x));
    if (added.length) console.log(`  ${label} added: ${added.join(', ')}`);
    if (removed.length) console.log(`  ${label} removed: ${removed.join(', ')}`);
    any ||= added.length > 0 || removed.length > 0;
  };
  sets('message type/subtype', before.messages, after.messages);
  sets('Options key', before.options, after.options);
  sets('Query member', new Set(before.query.keys()), new Set(after.query.keys()));
  for (const [name, type] of after.query) {
    const was = before.query.get(name);
    if (was !== undefined && was.full !== type.full) {
      console.log(`  Query.${name}: ${was.shown}\n    → ${type.shown}`);
      any = true;
    }
  }
  sets('hook event', before.hookEvents, after.hookEvents);
  if (!any) console.log('  nothing in message types, Options keys, Query members or hook events');
}

function main(): number {
  const wanted = process.argv[2] ?? run('npm', ['view', SDK, 'version'], true);
  if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(wanted)) throw new Error(`not a version: ${wanted}`);
  const before = surface(NEWEST_ALIAS);
  if (before?.version === wanted) {
    console.log(`${NEWEST_ALIAS} is already ${SDK}@${wanted}; checking it.`);
  } else {
    console.log(`${NEWEST_ALIAS}: ${before?.version ?? '(not installed)'} → ${SDK}@${wanted}`);
    run('npm', ['install', '--save-dev', '--save-exact', `${NEWEST_ALIAS}@npm:${SDK}@${wanted}`]);
    run(process.execPath, [path.join(ROOT, 'scripts', 'lockfile-platforms.mjs')]);
  }
  const after = surface(NEWEST_ALIAS)!;
  if (before && before.version !== after.version) printChanges(before, after);
  const sdk = sdksUnderTest().find((s) => s.dependency === NEWEST_ALIAS);
  if (!sdk) throw new Error(`${NEWEST_ALIAS} is not a dev dependency in package.json`);
  const errors = compileConformance(sdk);
  if (errors.length === 0) {
    console.log(`\n${SDK}@${sdk.version} (${NEWEST_ALIAS}): test/types/sdk-conformance.ts compiles: our types conform.`);
    return 0;
  }
  console.log(`\n${SDK}@${sdk.version} (${NEWEST_ALIAS}): ${errors.length} conformance error(s) in test/types/sdk-conformance.ts:\n`);
  console.log(formatErrors(errors));
  console.log(
    '\nEach names the check that failed (see the comment above it). Fix our types so both versions pass, or, where one' +
      ' version cannot, say which and how in README ("From the Claude Agent SDK"); then `npx jest test/types/sdk-conformance.test.ts`.',
  );
  return 1;
}

process.exitCode = main();
