/**
 * The fast unit tests alone (test/unit): pure modules, no Temporal dev server (no globalSetup).
 * Used by `npm run test:unit` and by Stryker (stryker.config.json), which runs them once per mutant.
 */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
  testTimeout: 30000,
  maxWorkers: 1,
};
