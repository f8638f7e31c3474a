/**
 * The pure parts of `durable-agent stalled` (src/client/stalled.ts): the hand-rolled protobuf of
 * the admin call, the one-line "waiting on", and the report's grouping.
 */
import { decodeFields, encodeMessage, fieldString } from '../../src/client/proto-wire';
import { formatAge, renderStalled, waitingOn, type StalledSession } from '../../src/client/stalled';

describe('proto-wire', () => {
  test('encodes strings, booleans and nested messages as protobuf does', () => {
    // DescribeMutableStateRequest{namespace: "ns", execution: {workflow_id: "w", run_id: "r"}, skip_force_reload: true}
    const bytes = encodeMessage([
      [1, 'ns'],
      [
        2,
        [
          [1, 'w'],
          [2, 'r'],
        ],
      ],
      [3, true],
      [4, undefined],
    ]);
    expect([...bytes]).toEqual([0x0a, 2, 0x6e, 0x73, 0x12, 6, 0x0a, 1, 0x77, 0x12, 1, 0x72, 0x18, 1]);
  });

  test('reads nested fields by number, skipping varints and fixed-width fields, the last occurrence winning', () => {
    const inner = encodeMessage([[33, 'sticky-q']]);
    const reply = Buffer.concat([
      encodeMessage([
        [1, '7'],
        [2, '127.0.0.2:7234'],
      ]),
      Buffer.from([0x28, 0x96, 0x01]), // field 5, varint 150
      Buffer.from([0x31, 1, 2, 3, 4, 5, 6, 7, 8]), // field 6, fixed64
      Buffer.from([0x3d, 1, 2, 3, 4]), // field 7, fixed32
      encodeMessage([[3, [[7, [[33, 'old']]]]]]),
      encodeMessage([[3, [[7, [[33, 'sticky-q']]]]]]),
    ]);
    expect(decodeFields(reply).map((f) => f.no)).toEqual([1, 2, 5, 3, 3]);
    expect(decodeFields(reply)[2]).toEqual({ no: 5, value: 150 });
    expect(fieldString(reply, [1])).toBe('7');
    expect(fieldString(reply, [2])).toBe('127.0.0.2:7234');
    expect(fieldString(reply, [3, 7, 33])).toBe('sticky-q');
    expect(fieldString(reply, [4, 7, 33])).toBeUndefined();
    expect(fieldString(inner, [33])).toBe('sticky-q');
    // A long varint length (300 bytes) round-trips.
    const long = 'x'.repeat(300);
    expect(fieldString(encodeMessage([[9, long]]), [9])).toBe(long);
  });

  test('refuses truncated input', () => {
    expect(() => decodeFields(Buffer.from([0x0a, 5, 1]))).toThrow('protobuf: truncated field');
    expect(() => decodeFields(Buffer.from([0x08, 0x80]))).toThrow('protobuf: truncated varint');
  });
});

const base: Omit<StalledSession, 'waitingOn'> = {
  sessionId: 's',
  runId: 'r',
  agentStatus: 'running',
  quietMs: 300_000,
  lastEvent: 'WORKFLOW_TASK_COMPLETED',
  taskQueue: 'agent',
  activities: [],
  pendingChildren: 0,
};

describe('waitingOn', () => {
  test('a workflow task not picked up names the queue it waits on, the sticky one first', () => {
    const wft = { state: 'scheduled', attempt: 1, scheduledAgoMs: 312_000 } as const;
    expect(waitingOn({ ...base, workflowTask: wft })).toBe('workflow task (attempt 1) scheduled 5m12s ago on queue agent, not started');
    expect(waitingOn({ ...base, stickyQueue: 'agent-sticky-1', workflowTask: wft })).toBe(
      'workflow task (attempt 1) scheduled 5m12s ago on sticky queue agent-sticky-1, not started',
    );
    expect(waitingOn({ ...base, workflowTask: { state: 'started', attempt: 3, startedAgoMs: 9_000 } })).toBe(
      'workflow task (attempt 3) started 9s ago, not completed',
    );
  });

  test('activities: not started, retry backoff, running; subagents', () => {
    expect(
      waitingOn({
        ...base,
        activities: [
          { type: 'runTool', state: 'scheduled', attempt: 1, taskQueue: 'agent-tools', scheduledAgoMs: 61_000 },
          { type: 'callModel', state: 'scheduled', attempt: 4, nextAttemptInMs: 20_000, lastFailure: 'rate limited' },
          { type: 'callModel', state: 'started', attempt: 2, startedAgoMs: 7_200_000, heartbeatAgoMs: 400_000, identity: '1@host' },
          { type: 'summarize', state: 'started', attempt: 1, startedAgoMs: 1_000 },
        ],
        pendingChildren: 2,
      }),
    ).toBe(
      'runTool (attempt 1) scheduled 1m01s ago on agent-tools, not started; ' +
        'callModel attempt 4 waiting to retry in 20s (last failure: rate limited); ' +
        'callModel (attempt 2) running for 2h00m on 1@host, last heartbeat 6m40s ago; ' +
        'summarize (attempt 1) running for 1s on ?, no heartbeat; 2 subagent session(s)',
    );
  });

  test('nothing pending: a person when the session waits for one, else what history last said', () => {
    expect(waitingOn({ ...base, agentStatus: 'waiting_for_approval' })).toBe('a person (waiting_for_approval)');
    expect(waitingOn(base)).toBe('nothing pending since WORKFLOW_TASK_COMPLETED (a timer, or a task the server has not dispatched)');
  });
});

test('formatAge', () => {
  expect([0, 999, 59_400, 60_000, 3_599_000, 3_600_000, 90_061_000, undefined, NaN].map(formatAge)).toEqual([
    '0s',
    '1s',
    '59s',
    '1m00s',
    '59m59s',
    '1h00m',
    '25h01m',
    '?',
    '?',
  ]);
});

test('the report groups sessions by what they wait on and by shard owner, and shows the queues', () => {
  const wft = (ago: number) => ({ state: 'scheduled' as const, attempt: 1, scheduledAgoMs: ago });
  const session = (id: string, ago: number, shard: number, owner: string): StalledSession => {
    const s = { ...base, sessionId: id, quietMs: ago, stickyQueue: 'sq', workflowTask: wft(ago), shard: { id: shard, owner } };
    return { ...s, waitingOn: waitingOn(s) };
  };
  const lines = renderStalled({
    scanned: 1000,
    quietForMs: 60_000,
    sessions: [
      session('a', 400_000, 3, '127.0.0.2:7234'),
      session('b', 300_000, 9, '127.0.0.2:7234'),
      session('c', 200_000, 3, '127.0.0.2:7234'),
    ],
    queues: [{ queue: 'sq', type: 'workflow', sticky: true, pollers: 0, backlog: 3, backlogAgeMs: 400_000 }],
  });
  expect(lines[0]).toBe('3 of 1000 running session(s) have recorded nothing for 1m00s or more:');
  expect(lines[1]).toMatch(/^SESSION {2}QUIET {2}STATUS {3}SHARD {2}SHARD OWNER {5}WAITING ON$/);
  expect(lines.slice(lines.indexOf('by what they wait on:'))).toEqual([
    'by what they wait on:',
    '  3  workflow task (attempt N) scheduled N ago on sticky queue sq, not started',
    'by shard owner (history host):',
    '  3  127.0.0.2:7234 (shards 3, 9)',
    'task queues they wait on:',
    '  sq (sticky workflow): no pollers, backlog 3 (oldest 6m40s)',
  ]);
  expect(renderStalled({ scanned: 5, quietForMs: 60_000, sessions: [], queues: [] })).toEqual([
    '0 of 5 running session(s) have recorded nothing for 1m00s or more.',
  ]);
});
