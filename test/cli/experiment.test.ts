/** `sluice experiment`: the experiment runner of the checkout, its help and its refusals, through the CLI. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { experiment } from '../../src/experiment.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'sluice-cli-experiment-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The CLI from source, from any directory: tsx's loader by its path. */
const sluice = (args: string[], cwd = ROOT) =>
  spawnSync(process.execPath, ['--import', pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href, path.join(ROOT, 'src/main.ts'), ...args], { cwd, encoding: 'utf8', timeout: 90_000 });

describe('sluice experiment', { timeout: 90_000 }, () => {
  it('prints the runner\'s usage', () => {
    const r = sluice(['experiment', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: npm run experiment -- <file.yaml>');
    expect(r.stdout).toContain('--gateway-source');
  });

  it('refuses a bad file before starting anything, naming the field, with a path relative to where it was called', () => {
    writeFileSync(path.join(tmp, 'bad.yaml'), 'name: bad\ndescription: d\nproviders: { a: { error_rate: 2 } }\nconfigs: { x: { fake: a }, y: { fake: a } }\nload: { rate_per_s: 1, duration_s: 1 }\n');
    const r = sluice(['experiment', 'bad.yaml', '--no-build'], tmp);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('bad.yaml: providers.a.error_rate: ');
  });

  it('is listed in the help', () => {
    expect(sluice(['--help']).stdout).toMatch(/^ {2}experiment {9}run a routing experiment file/m);
  });

  it('says where experiments run when the package has no benchmarks/', async () => {
    const lines: string[] = [];
    expect(await experiment(['x.yaml'], (l) => lines.push(l), tmp)).toBe(2);
    expect(lines.join('\n')).toContain('runs from a source checkout of Sluice');
  });
});
