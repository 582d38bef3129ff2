import { describe, expect, it } from 'vitest';
import { chatResponse, expectInvalid, run, verdict } from './_helpers.js';

describe('containsCode', () => {
  const py = 'Try this:\n```python\nprint(1)\n```\nand\n```\nplain\n```';
  it('finds fenced blocks and their language', async () => {
    expect(await run('containsCode', {}, chatResponse(py))).toEqual({ verdict: true, data: { blocks: 2, formats: ['Python'] } });
    expect(await verdict('containsCode', {}, chatResponse('no code, just `inline`'))).toBe(false);
  });

  it('with format: passes only for a block of that format (tags and aliases)', async () => {
    expect(await verdict('containsCode', { format: 'Python' }, chatResponse(py))).toBe(true);
    expect(await verdict('containsCode', { format: 'SQL' }, chatResponse(py))).toBe(false);
    expect(await verdict('containsCode', { format: 'TypeScript' }, chatResponse('~~~ts\nlet a = 1\n~~~'))).toBe(true);
    expect(await verdict('containsCode', { format: 'Shell' }, chatResponse('```bash\nls\n```'))).toBe(true);
  });

  it('a closing fence is not read as an opening one', async () => {
    // The untagged fence opens the block; "```sql" closes it, so no SQL block exists.
    const text = '```\nSELECT 1\n```sql\n';
    expect(await verdict('containsCode', { format: 'SQL' }, chatResponse(text))).toBe(false);
  });

  it('not inverts; an unknown format is refused', async () => {
    expect(await verdict('containsCode', { not: true }, chatResponse(py))).toBe(false);
    expectInvalid('containsCode', { format: 'Cobol' }, 'format');
  });
});
