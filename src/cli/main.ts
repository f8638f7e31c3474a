/**
 * `durable-agent` — the command line. Exit codes: 0 success, 1 the session ended in an error
 * result (or the command failed), 2 bad input (nothing started). Unknown flags print usage, exit 2.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ConfigError } from '../shared/config';
import { CodecConfigError } from '../codec/index';
import { BatchConflictError } from '../client/batch';
import { EXIT, err, out, UsageError } from './args';
import { approvalCommand } from './approval';
import { batchCommand, submitCommand } from './batch';
import { diffCommand, infoCommand } from './inspect';
import { reportCommand, resultsCommand } from './results';
import { forkCommand, idCommand, lsCommand, resumeCommand, runCommand } from './session';
import { CheckpointChoiceError } from '../client/checkpoints';
import { CheckpointsNotFoundError } from './checkpoint-diff';
import { cleanupCommand } from './workspace';
import { stalledCommand } from './stalled';
import { SessionExistsError, SessionNotFoundError } from '../client/client';
import { JobsFileError } from '../client/jobs-file';
import { BuildNotFoundError, DeploymentNotFoundError } from '../client/deploy';

const USAGE = `usage: durable-agent <command> [options]   (durable-agent <command> --help for its options)

Sessions:
  run [prompt]             start a session and stream it (--detach: print its id and return)
  resume ID [prompt]       continue a session's conversation (--fork: as a new session)
  fork ID --at N [prompt]  a new session from ID as it was after turn N: transcript and files
  watch ID                 stream a session's messages (--json: one SDK message per line)
  send ID TEXT             send a follow-up message to an interactive session
  interrupt ID             interrupt the current turn
  set-model ID MODEL       switch the model for the next call
  set-permission-mode ID MODE
  approve ID [REQUEST]     let a tool call waiting for approval run (--always: and its like from now on)
  deny ID [REQUEST]        refuse it (--message TEXT: what the model is told; --interrupt)
  usage ID                 tokens and cost so far
  show ID                  the transcript, and the workspace checkpoints by turn
  info ID                  one session's facts: status, model, cwd, workspace, verdict, cost (--json)
  diff ID                  the patch of what the agent changed in the session's workspace
                           (--from N --to M: between the checkpoints of two turns)
  ls                       list sessions (--status running|waiting_for_approval|… --batch ID …)
  stalled                  running sessions that recorded nothing for a while, and what each waits on
                           (workflow task, activities, shard and the server node owning it, queues)
  cancel ID                end a session (or a batch)
Batches:
  submit JOBS.jsonl|.yaml  run many sessions under a concurrency cap (--concurrency N --batch-id ID;
                           --model A --model B: every job once per model)
  results BATCH_ID         one line per job (--format jsonl|csv --out FILE --patches DIR)
  report BATCH_ID…         resolved share, errors, cost, turns and time per task, a row per model (--json)
  batch status BATCH_ID    the batch's progress (--watch: live until it ends; --json)
Workspaces:
  cleanup --older-than 7d  on a tools host: remove finished sessions' workspaces (never a running one's)
Infrastructure:
  server                   run the Temporal dev server (SQLite, Web UI, our search attributes)
  server --postgres URL    run the full Temporal server on PostgreSQL (--nodes N: a cluster on this machine)
  worker                   run the workflow, model and tool workers in one process
                           (--deployment NAME --build-id ID: as a build of a worker deployment)
  deploy set-current BUILD make a build current: new sessions start on it, older ones move at continue-as-new
  deploy status            the deployment's builds and the running sessions on each
  scripted-model           serve scenario files as an OpenAI-compatible model (tests and demos)
  ui                       serve the dashboard: sessions, approvals, batches (--port 8234 --host 127.0.0.1)

Exit codes: 0 success, 1 the session ended in an error result, 2 bad input (nothing started).
Environment: TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE (default "default"),
TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_PROFILE / TEMPORAL_CONFIG_FILE (a Temporal CLI profile),
DURABLE_AGENT_TASK_QUEUE (default "agent"); OPENAI_BASE_URL, OPENAI_API_KEY (worker only);
DURABLE_AGENT_CHECKPOINT_REMOTE (diff --from/--to: where checkpoints not on this host are fetched from).`;

const ID_COMMANDS = ['watch', 'send', 'interrupt', 'set-model', 'set-permission-mode', 'usage', 'show', 'cancel'] as const;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'server':
        if (rest.some((a) => /^--(postgres|nodes)(=|$)/.test(a))) {
          return await lazy<typeof import('../server/postgres-command')>('../server/postgres-command').runPostgresServerCommand(rest);
        }
        return await lazy<typeof import('../server/dev-server')>('../server/dev-server').runServerCommand(rest);
      case 'worker':
        return await lazy<typeof import('../worker/main')>('../worker/main').runWorkerCommand(rest);
      case 'scripted-model':
        return await lazy<typeof import('../testing/scripted-model')>('../testing/scripted-model').runScriptedModelCli(rest);
      case 'ui':
        return await lazy<typeof import('./dashboard')>('./dashboard').uiCommand(rest);
      case 'run':
        return await runCommand(rest);
      case 'resume':
        return await resumeCommand(rest);
      case 'fork':
        return await forkCommand(rest);
      case 'ls':
        return await lsCommand(rest);
      case 'stalled':
        return await stalledCommand(rest);
      case 'approve':
      case 'deny':
        return await approvalCommand(command, rest);
      case 'submit':
        return await submitCommand(rest);
      case 'results':
        return await resultsCommand(rest);
      case 'report':
        return await reportCommand(rest);
      case 'info':
        return await infoCommand(rest);
      case 'diff':
        return await diffCommand(rest);
      case 'batch':
        return await batchCommand(rest);
      case 'deploy':
        return await lazy<typeof import('./deploy')>('./deploy').deployCommand(rest);
      case 'cleanup':
        return await cleanupCommand(rest);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        out(USAGE);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        if ((ID_COMMANDS as readonly string[]).includes(command)) return await idCommand(command as (typeof ID_COMMANDS)[number], rest);
        err(`unknown command '${command}'\n\n${USAGE}`);
        return EXIT.usage;
    }
  } catch (e) {
    return report(e);
  }
}

/**
 * Load a heavy subcommand only when it runs. `require`, not `import()`: bin/durable-agent.js
 * registers tsx's CommonJS hook only, and a dynamic import() of a .ts file bypasses it.
 */
function lazy<T>(id: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(id) as T;
}

/** Bad input (nothing happened) → 2; anything else → 1. */
function report(e: unknown): number {
  if (e instanceof WorkflowNotFoundError) e = new SessionNotFoundError(e.workflowId ?? '?');
  const badInput =
    e instanceof UsageError ||
    e instanceof ConfigError ||
    e instanceof JobsFileError ||
    e instanceof SessionExistsError ||
    e instanceof SessionNotFoundError ||
    e instanceof BatchConflictError ||
    e instanceof CheckpointChoiceError ||
    e instanceof CheckpointsNotFoundError ||
    e instanceof CodecConfigError ||
    e instanceof DeploymentNotFoundError ||
    e instanceof BuildNotFoundError;
  if (badInput) {
    err((e as Error).message);
    return EXIT.usage;
  }
  if (e instanceof WorkflowUpdateFailedError) {
    err(`rejected: ${e.cause?.message ?? e.message}`);
    return EXIT.usage;
  }
  err(`error: ${(e as Error)?.message ?? String(e)}`);
  return EXIT.error;
}

/**
 * Exit once what was written to stdout has gone out: a pipe takes a large output (a patch, many
 * result lines) in several writes, and `process.exit` would cut it short.
 */
export function exitAfterOutput(code: number): void {
  process.stdout.write('', () => process.exit(code));
}

if (require.main === module) {
  void main(process.argv.slice(2)).then(exitAfterOutput);
}
