/** The latency board's arithmetic: the average, its half-life, the failure sample and the tie band. */
import { describe, expect, it } from 'vitest';
import { LatencyBoard } from '../../src/state/latency-board.js';

describe('LatencyBoard', () => {
  it('the first sample is the average; later ones mix in at alpha', () => {
    const b = new LatencyBoard(1, { alpha: 0.3 });
    expect(b.latencyAt(0, 0)).toBeUndefined();
    b.record(0, 100, 0);
    expect(b.latencyAt(0, 0)).toBe(100);
    b.record(0, 200, 0);
    expect(b.latencyAt(0, 0)).toBeCloseTo(130, 9);
  });

  it('the average halves every half-life without a sample, and a sample mixes into the decayed value', () => {
    const b = new LatencyBoard(1, { halfLifeMs: 1000, alpha: 0.5 });
    b.record(0, 80, 0);
    expect(b.latencyAt(0, 1000)).toBeCloseTo(40, 9);
    expect(b.latencyAt(0, 3000)).toBeCloseTo(10, 9);
    b.record(0, 30, 3000);
    expect(b.latencyAt(0, 3000)).toBeCloseTo(20, 9);
    // A clock read earlier than the last sample does not grow the average.
    expect(b.latencyAt(0, 2000)).toBeCloseTo(20, 9);
  });

  it('a failure counts as at least failureSampleMs; a slower failure as itself', () => {
    const b = new LatencyBoard(2, { failureSampleMs: 5000 });
    b.record(0, 3, 0, true);
    b.record(1, 7000, 0, true);
    expect([b.latencyAt(0, 0), b.latencyAt(1, 0)]).toEqual([5000, 7000]);
  });

  it('better: an idle child without samples first; the second candidate only when more than the tie band lower', () => {
    const b = new LatencyBoard(3, { tie: 0.1 });
    expect(b.better(0, 1, 0)).toBe(0);
    b.record(0, 100, 0);
    expect(b.better(0, 1, 0)).toBe(1); // 1 has no sample and is idle
    b.record(1, 91, 0);
    expect(b.better(0, 1, 0)).toBe(0); // 91 is within 10% of 100
    b.record(2, 89, 0);
    expect(b.better(0, 2, 0)).toBe(2);
    expect(b.better(2, 0, 0)).toBe(2);
    b.entries[2]!.inFlight = 1; // 89 × 2 against 100
    expect(b.better(0, 2, 0)).toBe(0);
  });
});
