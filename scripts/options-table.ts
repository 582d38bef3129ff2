/**
 * Renders the server options table of docs/operations.md from OPTION_TABLE (src/config/options.ts),
 * the one list `sluice serve` reads its flags and environment variables from, so the page cannot
 * name an option the server does not take or miss one it does.
 *
 *   node --import tsx scripts/options-table.ts           # check: exit 1 when the page differs
 *   node --import tsx scripts/options-table.ts --write   # rewrite the table
 */
import { pathToFileURL } from 'node:url';
import { OPTION_TABLE } from '../src/config/options.js';
import { writeOrCheck } from './markers.js';

export const OPTIONS_PAGE = 'docs/operations.md';
export const OPTIONS_MARKER = 'options';

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** One row per option: flag, environment variable, default, what it does. */
export function renderOptionsTable(): string {
  const rows = OPTION_TABLE.map((o) => {
    const def = 'def' in o ? `\`${o.def}\`` : '';
    return `| \`--${o.flag}\` | \`${o.env}\` | ${def} | ${cell(o.help)} |`;
  });
  return ['| flag | environment | default | |', '|---|---|---|---|', ...rows, ''].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeOrCheck(OPTIONS_PAGE, OPTIONS_MARKER, renderOptionsTable);
}
