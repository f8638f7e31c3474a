/** A large patch put back together from the `readPatchPart` results in a session's history; `info`'s facts. */
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { NoPatchError, patchPartsIn, reassemblePatch } from '../../src/client/patch';
import { infoFrom } from '../../src/cli/session-info';
import { SEARCH_ATTRIBUTES } from '../../src/shared/api';
import type { ResultMessage } from '../../src/shared/events';

type Event = temporal.api.history.v1.IHistoryEvent;
const payloads = (v: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(v)] });
const decode = async (p: temporal.api.common.v1.IPayload[]) => (p.length ? defaultPayloadConverter.fromPayload(p[0]!) : undefined);

const scheduled = (eventId: number, name: string, input: unknown): Event => ({
  eventId: eventId as unknown as Event['eventId'],
  activityTaskScheduledEventAttributes: { activityType: { name }, input: payloads(input) },
});
const completed = (eventId: number, scheduledEventId: number, result: unknown): Event => ({
  eventId: eventId as unknown as Event['eventId'],
  activityTaskCompletedEventAttributes: { scheduledEventId: scheduledEventId as unknown as Event['eventId'], result: payloads(result) },
});

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

describe('reassemblePatch', () => {
  test('a character split between two parts comes back whole (parts are bytes, as base64)', () => {
    const bytes = Buffer.from('+é\n');
    expect(
      reassemblePatch(
        [
          { part: 0, value: b64(bytes.subarray(0, 2)) },
          { part: 1, value: b64(bytes.subarray(2)) },
        ],
        2,
      ),
    ).toBe('+é\n');
  });

  test('parts in part order whatever the order given; a part read twice counts once', () => {
    expect(
      reassemblePatch(
        [
          { part: 2, value: b64('c') },
          { part: 0, value: b64('a') },
          { part: 1, value: b64('b') },
          { part: 1, value: b64('b') },
        ],
        3,
      ),
    ).toBe('abc');
    // 1-based parts are put together the same way.
    expect(
      reassemblePatch(
        [
          { part: 2, value: b64('y') },
          { part: 1, value: b64('x') },
        ],
        2,
      ),
    ).toBe('xy');
  });

  test('missing, extra or gapped parts, and a part that is not text, are refused', () => {
    const err = (parts: { part: number; value: unknown }[], n: number) => {
      try {
        reassemblePatch(parts, n);
      } catch (e) {
        expect(e).toBeInstanceOf(NoPatchError);
        return (e as NoPatchError).message;
      }
      throw new Error('expected a NoPatchError');
    };
    expect(err([{ part: 0, value: b64('a') }], 2)).toBe("the session's history holds 1 of the patch's 2 parts");
    expect(
      err(
        [
          { part: 0, value: b64('a') },
          { part: 2, value: b64('c') },
        ],
        2,
      ),
    ).toBe("the session's history holds 2 of the patch's 2 parts (parts 0, 2)");
    expect(
      err(
        [
          { part: 0, value: b64('a') },
          { part: 1, value: b64('b') },
        ],
        1,
      ),
    ).toBe("the session's history holds 2 of the patch's 1 parts");
    expect(err([{ part: 0, value: 7 }], 1)).toBe('patch part 0 is not text (number)');
  });
});

describe('patchPartsIn', () => {
  test("each completed readPatchPart's part number and result; other activities and unfinished ones are left out", async () => {
    const events: Event[] = [
      scheduled(5, 'readPatchPart', { sessionId: 's', part: 1 }),
      scheduled(6, 'readPatchPart', { sessionId: 's', part: 0 }),
      scheduled(7, 'runVerify', { sessionId: 's', part: 9 }),
      scheduled(8, 'readPatchPart', { sessionId: 's', part: 2 }),
      completed(9, 6, b64('first ')),
      completed(10, 7, 'not a part'),
      completed(11, 5, b64('second')),
    ];
    const parts = await patchPartsIn(events, decode);
    expect(parts).toEqual([
      { part: 0, value: b64('first ') },
      { part: 1, value: b64('second') },
    ]);
    expect(reassemblePatch(parts, 2)).toBe('first second');
  });
});

describe('infoFrom', () => {
  const startTime = new Date('2026-01-01T00:00:00Z');
  const sa = {
    [SEARCH_ATTRIBUTES.status]: ['completed'],
    [SEARCH_ATTRIBUTES.model]: ['gpt-4.1'],
    [SEARCH_ATTRIBUTES.turns]: [4],
    [SEARCH_ATTRIBUTES.costUsd]: [0.25],
  };

  test("a finished workspace session: the result's figures, its workspace without the patch, and its verdict", () => {
    const result = {
      type: 'result',
      subtype: 'success',
      is_error: false,
      num_turns: 5,
      duration_ms: 4000,
      total_cost_usd: 0.3,
      modelUsage: {},
      verdict: 'fail',
      verify: { command: 'npm test', exitCode: 1, durationMs: 10, outputTail: 'x' },
      workspace: {
        path: '/ws/s-1',
        host: 'h',
        kind: 'git',
        base: 'abc',
        source: { git: '/r.git' },
        diffStat: { filesChanged: 1, insertions: 1, deletions: 1 },
        patch: 'secret diff',
      },
    } as unknown as ResultMessage;
    const info = infoFrom({ id: 's-1', executionStatus: 'COMPLETED', searchAttributes: sa, memo: { cwd: '' }, startTime, result });
    expect(info).toMatchObject({
      id: 's-1',
      status: 'completed',
      cwd: '/ws/s-1',
      model: 'gpt-4.1',
      verdict: 'fail',
      costUsd: 0.3,
      turns: 5,
      durationMs: 4000,
      error: null,
      workspace: { path: '/ws/s-1', host: 'h', base: 'abc', diffStat: { filesChanged: 1, insertions: 1, deletions: 1 } },
    });
    expect(JSON.stringify(info)).not.toContain('secret diff');
  });

  test('a running session: search attributes, no verdict; a terminated one: interrupted, with why', () => {
    const running = infoFrom({
      id: 's',
      executionStatus: 'RUNNING',
      searchAttributes: { ...sa, [SEARCH_ATTRIBUTES.status]: ['running'] },
      startTime,
      startCwd: '/w',
    });
    expect(running).toMatchObject({
      status: 'running',
      cwd: '/w',
      costUsd: 0.25,
      turns: 4,
      verdict: null,
      workspace: null,
      durationMs: null,
      error: null,
    });
    const ended = infoFrom({
      id: 's',
      executionStatus: 'TERMINATED',
      searchAttributes: sa,
      startTime,
      closeTime: new Date(startTime.getTime() + 1500),
      failure: 'Workflow execution terminated',
    });
    expect(ended).toMatchObject({ status: 'interrupted', durationMs: 1500, error: 'Workflow execution terminated' });
  });
});
