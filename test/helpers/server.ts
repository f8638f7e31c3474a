/** The Temporal dev server shared by the whole jest run (started in test/global-setup.ts). */

export const TEST_NAMESPACE = 'default';

/** `host:port` of the test server's gRPC frontend. */
export function testAddress(): string {
  const address = process.env.TEMPORAL_TEST_ADDRESS;
  if (!address) {
    throw new Error(
      'TEMPORAL_TEST_ADDRESS is not set: run tests through jest (its globalSetup, test/global-setup.ts, ' +
        'starts a Temporal dev server and sets it), or set it to the address of a running server ' +
        '(e.g. `durable-agent server`, then TEMPORAL_TEST_ADDRESS=127.0.0.1:7233).',
    );
  }
  return address;
}
