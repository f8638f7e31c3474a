/**
 * The stream watchdog's heartbeats (src/activities/heartbeat.ts): the first chunk and every change
 * of details beat at once; a burst of chunks with the same details beats once, not once a chunk;
 * the same details beat again after a quiet spell; a model call attempt holds its beats back for
 * half its heartbeat timeout. Run in the SDK's activity test environment.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { DeferredHeartbeat, watchStream } from '../../src/activities/heartbeat';

/** An activity environment with this heartbeat timeout, and the details of every beat it sent. */
function recording(heartbeatTimeoutMs: number, waitedMs = 0): { env: MockActivityEnvironment; beats: unknown[] } {
  // Scheduled just now (or `waitedMs` ago) by the server.
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs, currentAttemptScheduledTimestampMs: Date.now() - waitedMs });
  const beats: unknown[] = [];
  env.on('heartbeat', (d: unknown) => beats.push(d));
  return { env, beats };
}

test('a burst of chunks beats once per change of details, and again after 500 ms', async () => {
  const { env, beats } = recording(60_000);
  await env.run(async () => {
    const watchdog = watchStream({ idleMs: 60_000, phase: 'waiting' });
    try {
      const streaming = { phase: 'streaming' };
      for (let i = 0; i < 200; i++) watchdog.onChunk(streaming);
      expect(beats).toEqual([streaming]);
      const tools = { phase: 'tool-call' };
      watchdog.onChunk(tools);
      watchdog.onChunk(tools);
      expect(beats).toEqual([streaming, tools]);
      await new Promise((r) => setTimeout(r, 550));
      watchdog.onChunk(tools);
      expect(beats).toEqual([streaming, tools, tools]);
    } finally {
      watchdog.dispose();
    }
  });
});

test('a model call attempt sends nothing for half its heartbeat timeout, then the latest details held back, then every beat', async () => {
  const { env, beats } = recording(400);
  await env.run(async () => {
    const hb = new DeferredHeartbeat();
    try {
      hb.beat({ phase: 'reading prompt' });
      hb.beat({ phase: 'streaming' });
      // A call that ends inside the window costs the server no heartbeat.
      expect(beats).toEqual([]);
      await new Promise((r) => setTimeout(r, 250));
      expect(beats).toEqual([{ phase: 'streaming' }]);
      hb.beat({ phase: 'streaming', n: 2 });
      expect(beats).toEqual([{ phase: 'streaming' }, { phase: 'streaming', n: 2 }]);
    } finally {
      hb.dispose();
    }
  });
});

test('an attempt that fails inside the window records what it held back (the retry reads which process ran it); one that ends sends nothing later', async () => {
  const { env, beats } = recording(400);
  await env.run(async () => {
    const failed = new DeferredHeartbeat();
    failed.beat({ worker: 'w1' });
    failed.flush();
    failed.dispose();
    expect(beats).toEqual([{ worker: 'w1' }]);
    const done = new DeferredHeartbeat();
    done.beat({ worker: 'w1', phase: 'streaming' });
    done.dispose();
    await new Promise((r) => setTimeout(r, 300));
    expect(beats).toEqual([{ worker: 'w1' }]);
  });
});

test("the window counts from the server's schedule time: an attempt that reached the worker late holds back only the rest", async () => {
  // Half of 1,000 ms is the window; 350 ms of it passed before the attempt reached the activity.
  const { env, beats } = recording(1_000, 350);
  await env.run(async () => {
    const hb = new DeferredHeartbeat();
    try {
      hb.beat({ phase: 'streaming' });
      expect(beats).toEqual([]);
      await new Promise((r) => setTimeout(r, 250));
      expect(beats).toEqual([{ phase: 'streaming' }]);
    } finally {
      hb.dispose();
    }
  });
});

test('an attempt that reaches the worker past half its heartbeat timeout beats at once', async () => {
  const { env, beats } = recording(1_000, 600);
  await env.run(async () => {
    const hb = new DeferredHeartbeat();
    try {
      hb.beat({ phase: 'reading prompt' });
      expect(beats).toEqual([{ phase: 'reading prompt' }]);
    } finally {
      hb.dispose();
    }
  });
});
