/**
 * A Stryker ignorer: the `.describe('…')` texts of the session options schema
 * (src/shared/config.ts, src/shared/compaction-config.ts). They document each option in the source
 * and nothing reads them (that schema is never turned into JSON Schema or help text), so a
 * mutant there cannot change behaviour. The `.describe()` texts of tool schemas are not ignored:
 * they reach the model in the tool's input schema, and the unit tests pin them.
 */
import { declareValuePlugin, PluginKind } from '@stryker-mutator/api/plugin';

const DOC_ONLY = [/src[\\/]shared[\\/]config\.ts$/, /src[\\/]shared[\\/]compaction-config\.ts$/];

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'session-option-docs', {
    shouldIgnore(path) {
      // Only the text argument: the schema chain the call hangs on (bounds, defaults) stays mutated.
      const node = path.node;
      const call = path.parentPath?.node;
      if (node.type !== 'StringLiteral' || call?.type !== 'CallExpression' || !call.arguments.includes(node)) return undefined;
      if (call.callee.type !== 'MemberExpression' || call.callee.property.type !== 'Identifier' || call.callee.property.name !== 'describe')
        return undefined;
      const file = path.hub?.file?.opts?.filename ?? node.loc?.filename ?? '';
      if (!DOC_ONLY.some((re) => re.test(file))) return undefined;
      return 'documentation of a session option: nothing reads it';
    },
  }),
];
