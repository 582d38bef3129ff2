/** Child processes that tests start (not a test file itself). */
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
let hooked = false;

/** SIGKILL `child` if the test process exits while it still runs (a failed test must leave nothing behind). */
export function killOnExit(child: ChildProcess): void {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const p of live) p.kill('SIGKILL');
    });
  }
  live.add(child);
  child.once('exit', () => live.delete(child));
}
