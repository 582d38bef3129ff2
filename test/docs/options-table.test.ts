/**
 * docs/operations.md's options table is the one scripts/options-table.ts renders from OPTION_TABLE:
 * an option added, renamed or given another default in the code shows up here until the page is
 * regenerated (`node --import tsx scripts/options-table.ts --write`).
 */
import { describe, expect, it } from 'vitest';
import { OPTION_TABLE } from '../../src/config/options.js';
import { between } from '../../scripts/markers.js';
import { OPTIONS_MARKER, OPTIONS_PAGE, renderOptionsTable } from '../../scripts/options-table.js';
import { readPage } from './markdown.js';

describe('docs/operations.md options table', () => {
  const table = between(readPage(OPTIONS_PAGE), OPTIONS_MARKER);

  it('is what scripts/options-table.ts renders from the code', () => {
    expect(table).toBe(renderOptionsTable());
  });

  it('has one row per option, with its environment variable and default', () => {
    for (const o of OPTION_TABLE) {
      const row = table.split('\n').find((l) => l.startsWith(`| \`--${o.flag}\` |`));
      expect(row, `--${o.flag}`).toBeDefined();
      expect(row).toContain(`\`${o.env}\``);
      if ('def' in o) expect(row).toContain(`\`${o.def}\``);
    }
    expect(table.split('\n').filter((l) => l.startsWith('| `--')).length).toBe(OPTION_TABLE.length);
  });
});
