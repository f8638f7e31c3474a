/**
 * Print README's "Options" table from src/client/sdk-option-support.ts:
 * `npx tsx scripts/options-table.ts` (test/unit/sdk-options.test.ts fails when README differs).
 */
import { describeSupport, OPTION_SUPPORT } from '../src/client/sdk-option-support';

export const TABLE_START = '<!-- options-table:start (npx tsx scripts/options-table.ts) -->';
export const TABLE_END = '<!-- options-table:end -->';

const ORDER = { supported: 0, later: 1, refused: 2 } as const;

export function optionsTable(): string {
  const rows = Object.entries(OPTION_SUPPORT)
    .sort(([a, x], [b, y]) => ORDER[x.status] - ORDER[y.status] || a.localeCompare(b))
    .map(([key, s]) => `| \`${key}\` | ${describeSupport(s)} | ${s.note.replace(/\|/g, '\\|')} |`);
  return [TABLE_START, '| option | status | what it does here / why not |', '|---|---|---|', ...rows, TABLE_END].join('\n');
}

if (require.main === module) console.log(optionsTable());
