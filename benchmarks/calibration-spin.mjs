/**
 * Preloaded (`node --import ./benchmarks/calibration-spin.mjs dist/main.js serve`) into a gateway
 * process the guardrails scenario uses only to calibrate its CPU reading; never into a measured or
 * shipped gateway. A response whose request carries `x-bench-spin-us: N` spends N µs of CPU on the
 * event loop just before it is written: a known cost on the answer path, where output guardrails run.
 * The scenario compares that process's CPU per request with and without the header to see what a
 * known N µs reads as on this machine (benchmarks/README.md, "Calibrating the guardrails figure").
 */
import { ServerResponse } from 'node:http';

const end = ServerResponse.prototype.end;
ServerResponse.prototype.end = function (...args) {
  const us = Number(this.req?.headers['x-bench-spin-us'] ?? 0);
  if (us > 0) {
    const until = performance.now() + us / 1000;
    while (performance.now() < until);
  }
  return end.apply(this, args);
};
