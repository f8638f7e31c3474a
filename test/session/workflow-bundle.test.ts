/**
 * The workers' bundle runs our workflow code as ES2022 (ARCHITECTURE.md#workflow-code-target):
 * object spreads and class fields stay V8's own instead of the SDK bundler's ES2017 helpers.
 */
import { compileWorkflowsForNode, WORKFLOW_CODE_TARGET } from '../../src/worker/bundle';
import { workflowBundle } from '../helpers/harness';

/** The source of one module of the bundle, from its webpack header to the next. */
function moduleSource(code: string, id: string): string {
  const start = code.indexOf(`/***/ "${id}"`);
  if (start === -1) throw new Error(`no module ${id} in the bundle`);
  const next = code.indexOf('\n/***/ "', start + 1);
  return code.slice(start, next === -1 ? undefined : next);
}

test('the bundle the workers run keeps object spreads and class fields native: no ES2017 helpers in any module', async () => {
  const { code } = await workflowBundle();
  // The helpers swc writes for ES2017 (75 spreads and 65 field definitions in the bundle before).
  expect(code).not.toMatch(/function _object_spread\(|function _define_property\(/);
  const session = moduleSource(code, './src/workflows/session/session.ts');
  expect(session).toContain('...this.contextDeps()');
  // `Session`'s fields are class fields, not assignments in its constructor.
  expect(session).toMatch(/\n\s+pending = \[\];/);
});

test('the hook sets the target of the swc rule it finds, and refuses a bundler config that has none', () => {
  const swc = { loader: '/x/node_modules/swc-loader/index.js', options: { jsc: { target: 'es2017', parser: { syntax: 'typescript' } } } };
  const config = {
    module: {
      rules: [
        { test: /\.js$/, use: ['source-map-loader'] },
        { test: /\.ts$/, use: swc },
      ],
    },
  };
  expect(compileWorkflowsForNode(config)).toBe(config);
  expect(swc.options.jsc).toEqual({ target: WORKFLOW_CODE_TARGET, parser: { syntax: 'typescript' } });
  expect(() => compileWorkflowsForNode({ module: { rules: [{ test: /\.ts$/, use: { loader: 'ts-loader' } }] } })).toThrow(
    'bundling workflows: the SDK bundler has no swc-loader rule with `jsc` options to set the target of',
  );
});
