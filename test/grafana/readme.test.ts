/**
 * grafana/README.md tells the truth about the metrics: every gateway metric it names is one
 * src/metrics/ defines, and no sentence says an exported one is not exported (yet).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(ROOT, 'grafana', 'README.md'), 'utf8');
/** The metric definitions: src/metrics/ (prometheus.ts and target-metrics.ts). */
const METRICS_SOURCE = readdirSync(join(ROOT, 'src', 'metrics'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => readFileSync(join(ROOT, 'src', 'metrics', f), 'utf8'))
  .join('\n');
const defined = (name: string): boolean => new RegExp(`['"\`]${name}['"\`]`).test(METRICS_SOURCE);
const GATEWAY_METRIC = /\b(?:sluice|gen_ai)_[a-z0-9_]+\b/g;

describe('grafana/README.md', () => {
  const paragraphs = README.split(/\n\s*\n/);

  it('names only metrics the gateway defines', () => {
    const named = new Set(README.match(GATEWAY_METRIC) ?? []);
    expect(named.size).toBeGreaterThan(5);
    for (const name of named) expect(defined(name), `${name} is not defined in src/metrics/`).toBe(true);
  });

  it('does not say that a metric the gateway exports is missing', () => {
    for (const p of paragraphs.filter((x) => /not (?:yet )?export|(?:isn't|is not|are not|aren't) exported|no data/i.test(x))) {
      const exported = (p.match(GATEWAY_METRIC) ?? []).filter(defined);
      expect(exported, `this paragraph says these are not exported:\n${p}`).toEqual([]);
    }
  });
});
