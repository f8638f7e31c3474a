/** Jest global teardown: stop the dev server started by global-setup.ts (same process). */
export default async function globalTeardown(): Promise<void> {
  const server = globalThis.__durableAgentDevServer;
  if (!server) return;
  globalThis.__durableAgentDevServer = undefined;
  await server.stop();
}
