/**
 * The stream watchdog's heartbeats (src/activities/heartbeat.ts): the first chunk and every change
 * of details beat at once; a burst of chunks with the same details beats once, not once a chunk;
 * the same details beat again after a quiet spell. Run in the SDK's activity test environment.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { watchStream } from '../../src/activities/heartbeat';

test('a burst of chunks beats once per change of details, and again after 500 ms', async () => {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 60_000 });
  const beats: unknown[] = [];
  env.on('heartbeat', (d: unknown) => beats.push(d));
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
