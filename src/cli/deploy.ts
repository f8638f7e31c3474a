/**
 * `durable-agent deploy set-current BUILD_ID` and `deploy status` (ARCHITECTURE.md#deploys;
 * docs/OPERATIONS.md#upgrades-with-worker-versioning).
 */
import { EXIT, out, parse, printJson, printTable, UsageError, withClient } from './args';
import { deploymentNameFrom, deploymentStatus, setCurrentBuild } from '../client/deploy';

const USAGE = `usage: durable-agent deploy set-current BUILD_ID [--deployment NAME]
       durable-agent deploy status [--deployment NAME] [--json]
  set-current   make BUILD_ID (a build whose workers have started) the deployment's current build: new sessions
                start on it, and sessions pinned to an older build move to it at their next continue-as-new
  status        the deployment's builds: current, draining or drained, and how many running sessions each holds
  --deployment  the worker deployment's name (default: DURABLE_AGENT_DEPLOYMENT)`;

/** `durable-agent deploy`. @public loaded by name through the CLI's lazy(), which knip cannot follow */
export async function deployCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help')
    return (out(USAGE), sub === undefined ? EXIT.usage : EXIT.ok);
  if (sub !== 'set-current' && sub !== 'status') throw new UsageError(`deploy: unknown subcommand '${sub}'\n\n${USAGE}`);
  const { values: v, positionals } = parse(rest, { deployment: { type: 'string' }, json: { type: 'boolean' } }, USAGE);
  if (v.help) return (out(USAGE), EXIT.ok);
  const deployment = deploymentNameFrom(v.deployment);
  if (!deployment) throw new UsageError(`--deployment: required (or set DURABLE_AGENT_DEPLOYMENT)\n\n${USAGE}`);
  if (sub === 'set-current') {
    if (positionals.length !== 1) throw new UsageError(`deploy set-current: expected one BUILD_ID\n\n${USAGE}`);
    const buildId = positionals[0]!;
    return withClient(async (c) => {
      const { previous, propagated } = await setCurrentBuild(c.client, deployment, buildId);
      out(`${deployment}: current build is now ${buildId}${previous ? ` (was ${previous})` : ''}`);
      if (!propagated)
        out('(the server is still telling its task queues: sessions continuing as new in the next seconds may start on the old build)');
      return EXIT.ok;
    });
  }
  if (positionals.length) throw new UsageError(`deploy status: unexpected argument '${positionals[0]}'\n\n${USAGE}`);
  return withClient(async (c) => {
    const s = await deploymentStatus(c.client, deployment);
    if (v.json) return (printJson(s), EXIT.ok);
    out(`deployment ${s.deployment}: current build ${s.currentBuild ?? '(none)'}${s.rampingBuild ? `, ramping ${s.rampingBuild}` : ''}`);
    const table = [
      ['BUILD', 'STATUS', 'RUNNING SESSIONS', 'CREATED'],
      ...s.versions.map((b) => [b.buildId, b.status, String(b.runningSessions), b.createdAt ?? '-']),
    ];
    printTable(table);
    return EXIT.ok;
  });
}
