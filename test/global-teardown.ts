/** Jest global teardown: stop the dev server started by global-setup.ts (same process) and remove its database. */
import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const server = globalThis.__durableAgentDevServer;
  if (!server) return;
  globalThis.__durableAgentDevServer = undefined;
  await server.stop();
  const dir = globalThis.__durableAgentDevServerDir;
  globalThis.__durableAgentDevServerDir = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
