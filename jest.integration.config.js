/**
 * The middle tier (`npm run test:integration`): the unit tests plus the tests that run real things
 * but no Temporal server — tools and activities in real temp dirs, real git, the real bubblewrap
 * sandbox, the scripted model over HTTP, MCP configs, the CLI's refusals before it connects, the
 * payload codec, workflow bundling and the replay corpus. No globalSetup, so nothing builds or
 * starts Temporal: a test that reaches for the server fails with "TEMPORAL_TEST_ADDRESS is not set".
 *
 * The list is explicit. Every entry must match a test file, so a moved or renamed file fails this
 * config at once instead of silently leaving the tier.
 */
const fs = require('node:fs');
const path = require('node:path');

/** Relative to the repository; a directory entry takes every *.test.ts below it. */
const INTEGRATION = [
  'test/unit/',
  'test/tools/bash.test.ts',
  'test/tools/glob.test.ts',
  'test/tools/grep.test.ts',
  'test/tools/path-guard.test.ts',
  'test/tools/paths.test.ts',
  'test/tools/read.test.ts',
  'test/tools/registry.test.ts',
  'test/tools/sandbox.test.ts',
  'test/tools/write-edit.test.ts',
  'test/hooks/load-settings.test.ts',
  'test/hooks/run-hooks.test.ts',
  'test/hooks/sandbox.test.ts',
  'test/hooks/snapshot.test.ts',
  'test/workspace/checkpoint.test.ts',
  'test/workspace/cleanup.test.ts',
  'test/workspace/diff.test.ts',
  'test/workspace/provision.test.ts',
  'test/workspace/verify.test.ts',
  'test/permissions/bash-rules.test.ts',
  'test/scripted-model/',
  'test/mcp/config.test.ts',
  'test/batch/jobs-file.test.ts',
  'test/codec/codec.test.ts',
  'test/client/connection-close.test.ts',
  'test/cli/no-temporal.test.ts',
  'test/ui/cli-ui.test.ts',
  'test/session/workflow-bundle.test.ts',
  'test/replay/replay.test.ts',
];

const missing = INTEGRATION.filter((entry) => !fs.existsSync(path.join(__dirname, entry)));
if (missing.length > 0) {
  throw new Error(`jest.integration.config.js lists test paths that do not exist (moved?): ${missing.join(', ')}`);
}

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  testMatch: INTEGRATION.map((entry) => (entry.endsWith('/') ? `<rootDir>/${entry}**/*.test.ts` : `<rootDir>/${entry}`)),
  testTimeout: 60000,
  maxWorkers: 2,
};
