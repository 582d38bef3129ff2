/**
 * How the property tests run (not a test file itself): one fixed seed unless `SLUICE_FUZZ_SEED`
 * names another, a bounded number of runs and a time limit per property, so the suite costs the
 * same every time in CI and a failure can be replayed exactly.
 *
 *   SLUICE_FUZZ_SEED=123 npx vitest run test/fuzz          # another seed
 *   SLUICE_FUZZ_RUNS=2000 SLUICE_FUZZ_MS=60000 npx vitest run test/fuzz   # a longer hunt
 *   SLUICE_FUZZ_SEED=… SLUICE_FUZZ_PATH=… npx vitest run test/fuzz -t '<name>'  # replay one failure
 *
 * A failure's message carries the seed, the path of the shrunk counterexample and the command to
 * replay it.
 */
import fc from 'fast-check';

const DEFAULT_SEED = 0x51ce;

function intEnv(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`${name} must be an integer, got "${v}"`);
  return n;
}

export const FUZZ_SEED = intEnv('SLUICE_FUZZ_SEED') ?? DEFAULT_SEED;
/** Multiplies every property's run count (SLUICE_FUZZ_RUNS replaces it outright). */
const RUNS = intEnv('SLUICE_FUZZ_RUNS');
/** Each property stops starting new runs after this long (the runs so far must all have passed). */
export const FUZZ_MS = intEnv('SLUICE_FUZZ_MS') ?? 4000;
const REPLAY_PATH = process.env.SLUICE_FUZZ_PATH || undefined;

/** A vitest timeout for one property: its time limit, plus the last run's exchanges and shrinking. */
export const PROPERTY_TIMEOUT_MS = FUZZ_MS + 25_000;

export interface CheckOptions {
  /** Runs in CI (default 100); SLUICE_FUZZ_RUNS overrides. */
  runs?: number;
}

function params(o: CheckOptions): fc.Parameters<unknown> {
  const p: fc.Parameters<unknown> = {
    seed: FUZZ_SEED,
    numRuns: RUNS ?? o.runs ?? 100,
    interruptAfterTimeLimit: FUZZ_MS,
    markInterruptAsFailure: false,
    endOnFailure: false,
  };
  if (REPLAY_PATH !== undefined) p.path = REPLAY_PATH;
  return p;
}

function failure(message: string, details: fc.RunDetails<unknown>): Error {
  const replay = `SLUICE_FUZZ_SEED=${details.seed}${details.counterexamplePath ? ` SLUICE_FUZZ_PATH=${details.counterexamplePath}` : ''}`;
  const cause = details.errorInstance;
  const why = cause instanceof Error ? cause.message : String(cause);
  return new Error(`${message}\n\nFailed with: ${why}\n\nReplay with: ${replay} npx vitest run test/fuzz`, { cause });
}

/** Checks a synchronous property with the suite's seed and bounds; throws with a replay line. */
export function check<T extends [unknown, ...unknown[]]>(prop: fc.IProperty<T>, o: CheckOptions = {}): void {
  const details = fc.check(prop, params(o) as fc.Parameters<T>);
  if (details.failed) throw failure(fc.defaultReportMessage(details) ?? 'property failed', details as fc.RunDetails<unknown>);
  if (details.numRuns === 0) throw new Error('the property ran no case before its time limit');
}

/** Checks an asynchronous property (one gateway exchange per run, say) the same way. */
export async function checkAsync<T extends [unknown, ...unknown[]]>(prop: fc.IAsyncProperty<T>, o: CheckOptions = {}): Promise<void> {
  const details = await fc.check(prop, params(o) as fc.Parameters<T>);
  if (details.failed) throw failure((await fc.asyncDefaultReportMessage(details)) ?? 'property failed', details as fc.RunDetails<unknown>);
  if (details.numRuns === 0) throw new Error('the property ran no case before its time limit');
}

/** Deterministic samples of an arbitrary (a batch made once per file, e.g. saved configs). */
export function sampleOf<T>(arb: fc.Arbitrary<T>, n: number, salt = 0): T[] {
  return fc.sample(arb, { seed: FUZZ_SEED + salt, numRuns: n });
}
