import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHECKS } from '../../src/checks/registry.js';
import { PII_CATEGORIES } from '../../src/checks/pii-detect.js';

const page = readFileSync(new URL('../../docs/guardrails.md', import.meta.url), 'utf8');
const section = page.split(/^## Checks$/m)[1]?.split(/^## /m)[0] ?? '';

describe('docs/guardrails.md, ## Checks', () => {
  it('has one row per registered check id, and no row for an unknown one', () => {
    const rows = [...section.matchAll(/^\| `([A-Za-z]+)`/gm)].map((m) => m[1]!);
    expect(rows.sort()).toEqual([...CHECKS.values()].map((d) => d.id).sort());
  });

  it('marks exactly the checks that take not', () => {
    const marked = [...section.matchAll(/^\| `([A-Za-z]+)` \*not\*/gm)].map((m) => m[1]!);
    expect(marked.sort()).toEqual([...CHECKS.values()].filter((d) => d.supportsNot).map((d) => d.id).sort());
  });

  it('names every pii category', () => {
    for (const c of PII_CATEGORIES) expect(section).toContain(`\`${c}\``);
  });
});
