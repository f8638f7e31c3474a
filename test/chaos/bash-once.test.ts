/**
 * DESIGN D4 at its sharpest: a worker SIGKILLed the moment its Bash commands start. Each command
 * appends a line to its workspace's ran.log; a retried attempt must either not run the command
 * again or say that the first attempt's effects are unknown — never run it twice silently.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { isUnknownOutcome, resultThroughRestarts, startCluster, toolResultsById, type Cluster } from '../helpers/chaos';
import { scenarioTag } from '../helpers/harness';

jest.setTimeout(180_000);

let c: Cluster;
beforeAll(async () => {
  c = await startCluster({ slots: 2 });
}, 180_000);
afterAll(async () => {
  await c?.close();
});

const SESSIONS = 12;

test('a Bash command whose worker dies as it starts never runs twice without saying so', async () => {
  c.addScenario({
    name: 'bash-once',
    turns: [turn.tool('Bash', { command: 'echo once >> ran.log && sleep 2 && echo finished' }), turn.text('done')],
  });
  await c.spawn(0);
  const sessions = await Promise.all(
    Array.from({ length: SESSIONS }, async (_, i) => {
      const ws = path.join(c.dir, `ws-once-${i}`);
      mkdirSync(ws);
      const handle = await c.client.start({
        sessionId: `bash-once-${i}`,
        prompt: `${scenarioTag('bash-once')} Run it.`,
        cwd: ws,
        permissionMode: 'bypassPermissions',
        heartbeatTimeoutMs: 3_000,
      });
      return { ws, handle };
    }),
  );
  // The first Bash child to appear: kill its worker at once, before the heartbeat that records
  // "started" can be assumed to have reached the server.
  await c.killMidBash({ slots: [0] });
  await c.spawn(1);

  const report: string[] = [];
  for (const { ws, handle } of sessions) {
    expect(await resultThroughRestarts(handle, 120_000)).toMatchObject({ subtype: 'success' });
    const result = toolResultsById(await handle.transcript()).get('call_0_0')!;
    // No file: the worker died after journalling the attempt but before the command ran.
    const log = path.join(ws, 'ran.log');
    const runs = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
    const said = isUnknownOutcome(result) ? 'unknown-outcome' : JSON.stringify(result.content);
    report.push(`${handle.sessionId}: ran ${runs}×, result ${said}`);
  }
  const silentReruns = report.filter((line) => /ran 2×, result "/.test(line));
  // A command that did not run exactly once must have been reported as of unknown outcome.
  const unexplained = report.filter((line) => /ran [02]×, result "/.test(line));
  expect({ silentReruns, unexplained, report }).toEqual({ silentReruns: [], unexplained: [], report });
});
