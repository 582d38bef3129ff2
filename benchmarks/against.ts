/**
 * `--against <ref>`: that ref's gateway, built from its own code in a temporary git worktree, with
 * this checkout's node_modules linked in (no install). The worktree is removed when the run ends,
 * however it ends.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, onExit } from './lib.js';

const git = (args: string[]): string => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** Builds dist/ of the checkout at `dir` with the project's TypeScript, output shown. */
export function buildDist(dir: string): void {
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
}

/** The commit HEAD is at, `+dirty` when tracked files changed; undefined outside git. */
export function headCommit(): string | undefined {
  try {
    return git(['rev-parse', '--short=12', 'HEAD']) + (git(['status', '--porcelain', '--untracked-files=no']) ? '+dirty' : '');
  } catch {
    return undefined;
  }
}

/** Checks out and builds `ref`; returns the worktree's directory and the commit it resolved to. */
export function buildRef(ref: string): { dir: string; commit: string } {
  const commit = git(['rev-parse', '--short=12', '--verify', `${ref}^{commit}`]);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-ref-'));
  onExit(() => removeWorktree(dir));
  git(['worktree', 'add', '--detach', dir, commit]);
  symlinkSync(realpathSync(path.join(REPO_ROOT, 'node_modules')), path.join(dir, 'node_modules'));
  buildDist(dir);
  return { dir, commit };
}

function removeWorktree(dir: string): void {
  try {
    unlinkSync(path.join(dir, 'node_modules')); // the link, never what it points to
  } catch {
    /* not made yet */
  }
  try {
    git(['worktree', 'remove', '--force', dir]);
  } catch {
    rmSync(dir, { recursive: true, force: true });
    try {
      git(['worktree', 'prune']);
    } catch {
      /* nothing to prune */
    }
  }
}
