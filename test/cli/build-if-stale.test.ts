/**
 * scripts/build-if-stale.mjs (npm's prestart and prequickstart): builds dist/ only when it is missing
 * or older than a source, so `npm start` starts the built server at once and still never runs stale
 * code. Run against a small TypeScript project in a temporary directory, with the repo's TypeScript.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
let dir: string;

const run = () => spawnSync(process.execPath, [join(dir, 'scripts', 'build-if-stale.mjs')], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
const main = () => join(dir, 'dist', 'main.js');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-build-'));
  mkdirSync(join(dir, 'scripts'));
  mkdirSync(join(dir, 'src', 'util'), { recursive: true });
  copyFileSync(join(ROOT, 'scripts', 'build-if-stale.mjs'), join(dir, 'scripts', 'build-if-stale.mjs'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['src'] }));
  writeFileSync(join(dir, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', compilerOptions: { rootDir: 'src', outDir: 'dist', noEmit: false }, include: ['src'] }));
  writeFileSync(join(dir, 'src', 'util', 'answer.ts'), 'export const answer: number = 42;\n');
  writeFileSync(join(dir, 'src', 'main.ts'), "import { answer } from './util/answer.js';\nconsole.log(answer);\n");
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('build-if-stale', () => {
  it('builds when dist/ is missing, then not again until a source changes', () => {
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toContain('dist/ is missing; building once (npm run build)');
    expect(existsSync(main())).toBe(true);
    const builtAt = statSync(main()).mtimeMs;

    const second = run();
    expect(second.status).toBe(0);
    expect(second.stderr).toBe('');
    expect(statSync(main()).mtimeMs).toBe(builtAt);

    // A source edited after the build (in a subdirectory): built again, once. The build is dated
    // back instead of the source forward, so the rebuilt output is newer than the source however
    // fast the build is.
    const source = statSync(join(dir, 'src', 'util', 'answer.ts')).mtimeMs;
    const older = new Date(Math.min(builtAt, source) - 20_000);
    const earlier = new Date(older.getTime() + 10_000);
    for (const f of ['tsconfig.json', 'tsconfig.build.json', join('src', 'main.ts')]) utimesSync(join(dir, f), older, older);
    utimesSync(main(), earlier, earlier);
    const third = run();
    expect(third.status, third.stderr).toBe(0);
    expect(third.stderr).toContain(`${join('src', 'util', 'answer.ts')} changed since the last build`);
    expect(statSync(main()).mtimeMs).toBeGreaterThan(earlier.getTime());
    expect(run().stderr).toBe('');
  });

  it('a build that fails stops the start, saying so', () => {
    writeFileSync(join(dir, 'src', 'util', 'answer.ts'), "export const answer: number = 'not a number';\n");
    const later = new Date(statSync(main()).mtimeMs + 10_000);
    utimesSync(join(dir, 'src', 'util', 'answer.ts'), later, later);
    const r = run();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('the build failed (above); fix it, then npm run build');
    writeFileSync(join(dir, 'src', 'util', 'answer.ts'), 'export const answer: number = 42;\n');
  });

  it('without TypeScript installed, says what to run', () => {
    rmSync(join(dir, 'node_modules'));
    rmSync(join(dir, 'dist'), { recursive: true, force: true });
    const r = run();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('dist/ is missing, and TypeScript is not installed to build it: run npm install, then npm run build');
  });

  it('does nothing where there is no src/ (an installed package)', () => {
    rmSync(join(dir, 'src'), { recursive: true });
    const r = run();
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });
});
