/** A Telemetry double shared by the operator and pipeline tests (not a test file itself). */
import type { Telemetry } from '../../src/metrics/telemetry.js';

export type Call = [keyof Telemetry, ...unknown[]];

/** A Telemetry that records every call, with the time (`now()`, e.g. virtual) it happened at. */
export function recording(now: () => number = () => 0): { telemetry: Telemetry; calls: Call[]; at: number[] } {
  const calls: Call[] = [];
  const at: number[] = [];
  const rec =
    (name: keyof Telemetry) =>
    (...args: unknown[]): void => {
      // An optional trailing argument left out (the exemplar's trace id when there is none) is not recorded.
      while (args.length > 0 && args[args.length - 1] === undefined) args.pop();
      calls.push([name, ...args]);
      at.push(now());
    };
  const telemetry: Telemetry = {
    targetStarted: rec('targetStarted'),
    targetFinished: rec('targetFinished'),
    timeToFirstToken: rec('timeToFirstToken'),
    tokens: rec('tokens'),
    retry: rec('retry'),
    fallback: rec('fallback'),
    circuit: rec('circuit'),
    request: rec('request'),
    cacheLookup: rec('cacheLookup'),
    storeOperation: rec('storeOperation'),
    check: rec('check'),
    hookDenied: rec('hookDenied'),
    feedback: rec('feedback'),
    usage: rec('usage'),
    limitRejected: rec('limitRejected'),
    limitAlert: rec('limitAlert'),
    limitStoreError: rec('limitStoreError'),
  };
  return { telemetry, calls, at };
}
