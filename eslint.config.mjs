// Lint: no floating promises anywhere; workflow code may not import I/O or read process.env (it
// runs in Temporal's deterministic sandbox and is replayed from history). Import cycles are
// checked by scripts/import-cycles.ts and the layers (which folder may import which) by
// scripts/layers.ts, both part of `npm run lint`.
import tseslint from 'typescript-eslint';

const ioModules = ['openai', 'fs', 'fs/promises', 'child_process', 'path', 'os', 'crypto', 'http', 'https', 'net', 'dns', 'worker_threads'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'bin/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ioModules.map((name) => ({ name, message: 'workflow code must stay deterministic: do I/O in an activity' })),
          patterns: [
            { group: ['node:*'], message: 'workflow code must stay deterministic: no Node builtins' },
            // Which src/ folders workflow code may import is the layering check's (scripts/layers.ts).
            {
              group: ['@temporalio/activity', '@temporalio/worker', '@temporalio/client'],
              message: 'workflows import only src/shared and @temporalio/workflow',
            },
          ],
        },
      ],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'workflow code must not read the environment' }],
      'no-restricted-globals': ['error', { name: 'process', message: 'workflow code must not touch process' }],
    },
  },
);
