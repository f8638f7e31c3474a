/**
 * Print README's "Options" table from src/sdk/option-support.ts and its "Query methods"
 * table from src/sdk/query-method-support.ts: `npx tsx scripts/options-table.ts`
 * (test/unit/sdk-options.test.ts fails when README differs).
 */
import { describeSupport, OPTION_SUPPORT } from '../src/sdk/option-support';
import { QUERY_METHOD_SUPPORT } from '../src/sdk/query-method-support';

export const TABLE_START = '<!-- options-table:start (npx tsx scripts/options-table.ts) -->';
export const TABLE_END = '<!-- options-table:end -->';
export const QUERY_TABLE_START = '<!-- query-table:start (npx tsx scripts/options-table.ts) -->';
export const QUERY_TABLE_END = '<!-- query-table:end -->';

const ORDER = { supported: 0, later: 1, refused: 2 } as const;
const cell = (s: string) => s.replace(/\|/g, '\\|');

export function optionsTable(): string {
  const rows = Object.entries(OPTION_SUPPORT)
    .sort(([a, x], [b, y]) => ORDER[x.status] - ORDER[y.status] || a.localeCompare(b))
    .map(([key, s]) => `| \`${key}\` | ${describeSupport(s)} | ${cell(s.note)} |`);
  return [TABLE_START, '| option | status | what it does here / why not |', '|---|---|---|', ...rows, TABLE_END].join('\n');
}

/** Supported methods in the order of the table's source, then the refused ones by name. */
export function queryTable(): string {
  const entries = Object.entries(QUERY_METHOD_SUPPORT);
  const rows = [
    ...entries.filter(([, s]) => s.status === 'supported'),
    ...entries.filter(([, s]) => s.status === 'refused').sort(([a], [b]) => a.localeCompare(b)),
  ].map(([name, s]) => `| \`${name}()\` | ${s.status} | ${cell(s.note)} |`);
  return [QUERY_TABLE_START, '| method | status | what it does here / why not |', '|---|---|---|', ...rows, QUERY_TABLE_END].join('\n');
}

if (require.main === module) console.log(`${optionsTable()}\n\n${queryTable()}`);
