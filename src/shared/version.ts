/** durable-agent's version, as `system/init` reports it (`claude_code_version`); test/unit/sdk-options.test.ts keeps it equal to package.json's. */
export const DURABLE_AGENT_VERSION = '0.1.0';
