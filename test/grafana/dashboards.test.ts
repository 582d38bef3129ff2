/**
 * What every dashboard in grafana/dashboards/ shares with sluice.json (whose own content
 * dashboard.test.ts checks in detail): a distinct uid, Grafana's schema 39, the Prometheus
 * datasource variable on every panel and target, unique panel ids, panels inside the grid, range
 * selectors on $__rate_interval, and label_values variables. Whether each query returns data is
 * live-dashboards.test.ts's job.
 */
import { describe, expect, it } from 'vitest';
import { dashboards, labelVariables } from './_panels.js';

const DS = { type: 'prometheus', uid: '${DS_PROMETHEUS}' };

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: unknown;
  gridPos?: { h: number; w: number; x: number; y: number };
  targets?: { refId?: string; expr?: string; datasource?: unknown }[];
  panels?: Panel[];
}
const flat = (ps: Panel[]): Panel[] => ps.flatMap((p) => [p, ...flat(p.panels ?? [])]);

describe('every dashboard in grafana/dashboards/', () => {
  const all = dashboards();

  it('has more than one dashboard, each with its own uid and title, and a link to the others', () => {
    expect(all.length).toBeGreaterThan(1);
    const raw = all.map((d) => d.dashboard as unknown as { uid: string; title: string; schemaVersion: number; links?: { type: string; tags: string[] }[] });
    expect(new Set(raw.map((d) => d.uid)).size).toBe(all.length);
    expect(new Set(raw.map((d) => d.title)).size).toBe(all.length);
    for (const d of raw) {
      expect(d.schemaVersion, d.uid).toBe(39);
      expect(d.links, d.uid).toContainEqual(expect.objectContaining({ type: 'dashboards', tags: ['sluice'] }));
    }
  });

  for (const { file, dashboard } of all) {
    describe(file, () => {
      const panels = flat(dashboard.panels as Panel[]);
      const queries = panels.filter((p) => p.type !== 'row');

      it('has unique panel ids, every panel inside the 24-column grid', () => {
        expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
        for (const p of panels) {
          const g = p.gridPos!;
          expect(g.x >= 0 && g.w > 0 && g.x + g.w <= 24 && g.h > 0 && g.y >= 0, `panel ${p.id} gridPos ${JSON.stringify(g)}`).toBe(true);
        }
      });

      it('queries the datasource variable from every panel and target, with refIds unique per panel', () => {
        for (const p of queries) {
          expect(p.datasource, `panel ${p.id}`).toEqual(DS);
          expect(p.targets?.length ?? 0, `panel ${p.id} targets`).toBeGreaterThan(0);
          expect(new Set(p.targets!.map((t) => t.refId)).size, `panel ${p.id} refIds`).toBe(p.targets!.length);
          for (const t of p.targets!) {
            expect(t.datasource, `panel ${p.id} ${t.refId}`).toEqual(DS);
            expect(t.expr?.trim(), `panel ${p.id} ${t.refId} expr`).toBeTruthy();
            for (const m of t.expr!.replace(/"(?:[^"\\]|\\.)*"/g, '""').matchAll(/\[([^\]]*)\]/g)) expect(m[1], `panel ${p.id}: ${t.expr}`).toBe('$__rate_interval');
          }
        }
      });
    });
  }

  it('fills every query variable with label_values(metric, label)', () => {
    expect(labelVariables().map((v) => v.name)).toEqual(expect.arrayContaining(['job', 'target', 'endpoint', 'provider']));
  });
});
