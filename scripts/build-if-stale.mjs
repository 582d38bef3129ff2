// Runs before `npm start` and `npm run quickstart`. They run the compiled dist/ (a start takes well
// under a second) instead of compiling on every start. `npm install` builds dist/ (the `prepare`
// script); this builds it again only when it is missing or older than a source file, so a clone
// installed with --ignore-scripts, or sources edited since the last build, still start what the
// sources say. Without src/ (an installed package) there is nothing to compare and nothing to do.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const main = join(root, 'dist', 'main.js');
const src = join(root, 'src');

/** The first source (or build setting) newer than `since`, if any. */
function newerThan(since) {
  for (const file of [join(root, 'tsconfig.json'), join(root, 'tsconfig.build.json')]) {
    if (existsSync(file) && statSync(file).mtimeMs > since) return file;
  }
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    if (statSync(file).mtimeMs > since) return file;
  }
  return undefined;
}

if (existsSync(src)) {
  const why = existsSync(main)
    ? ((f) => f && `${relative(root, f)} changed since the last build`)(newerThan(statSync(main).mtimeMs))
    : 'dist/ is missing';
  if (why) {
    let tsc;
    try {
      tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    } catch {
      process.stderr.write(`sluice: ${why}, and TypeScript is not installed to build it: run npm install, then npm run build\n`);
      process.exit(1);
    }
    process.stderr.write(`sluice: ${why}; building once (npm run build)\n`);
    const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) {
      process.stderr.write('sluice: the build failed (above); fix it, then npm run build\n');
      process.exit(1);
    }
  }
}
