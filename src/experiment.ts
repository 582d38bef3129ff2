import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout this file runs from: src/experiment.ts and dist/experiment.js both sit one level below it. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNNER = path.join('benchmarks', 'experiment.ts');

/** The arguments that name files, made absolute: the runner works from the checkout's root. */
function absolutePaths(argv: readonly string[], cwd: string): string[] {
  return argv.map((a, i) => {
    const prev = argv[i - 1];
    if (prev === '--out') return path.resolve(cwd, a);
    return a.startsWith('-') || prev === '--reps' || prev === '--duration' ? a : path.resolve(cwd, a);
  });
}

/**
 * `sluice experiment <file.yaml>`: the same run as `npm run experiment -- <file.yaml>`. Experiments
 * live in a source checkout (benchmarks/, with the dev dependencies that draw the charts), so an
 * installed package, which has no benchmarks/, is told where to run them. Resolves to the exit code.
 */
export function experiment(argv: readonly string[], err: (line: string) => void, root = ROOT): Promise<number> {
  if (!existsSync(path.join(root, RUNNER)) || !existsSync(path.join(root, 'node_modules', 'tsx'))) {
    err(`experiment: runs from a source checkout of Sluice with its dev dependencies installed (npm install there, then npm run experiment -- <file.yaml>); ${root} has no ${RUNNER}`);
    return Promise.resolve(2);
  }
  const child = spawn(process.execPath, ['--import', 'tsx', RUNNER, ...absolutePaths(argv, process.cwd())], { cwd: root, stdio: 'inherit' });
  const forward = (sig: NodeJS.Signals): void => void child.kill(sig);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 130 : 1))));
}
