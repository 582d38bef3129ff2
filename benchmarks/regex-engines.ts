/**
 * What the linear-time engine costs: the regexMatch check's search (findBounded, RE2 via re2js) next
 * to the same search on Node's backtracking RegExp, on the guardrails scenario's pattern and text
 * and on a few representative deny-list patterns, over the request's "hello", a 2 KB prompt and a
 * 64 KB prompt, each searched whole.
 *
 *   node --import tsx benchmarks/regex-engines.ts
 *
 * The native column is a baseline written here (one `exec` over the whole text, as the check did
 * before it moved to RE2); it is never used by the gateway. Figures: median µs per search over 15 rounds.
 */
import { performance } from 'node:perf_hooks';
import { compileBoundedRegex, findBounded } from '../src/util/bounded-regex.js';
import { median } from './lib.js';
import { GUARDRAILS } from './scenarios/guardrails.js';

const SCENARIO_RULE = GUARDRAILS.input_guardrails[0]!['default.regexMatch'].rule;

/** The first match with native RegExp over the whole text, as findBounded reads it. */
function nativeFirst(g: RegExp, s: string): number {
  g.lastIndex = 0;
  return g.exec(s)?.index ?? -1;
}

const prose = 'The quarterly report covers revenue, churn and the hiring plan for the next two quarters. ';
const TEXTS: [string, string][] = [
  ['"hello" (the scenario)', 'hello'],
  ['2 KB prompt', prose.repeat(Math.ceil(2048 / prose.length)).slice(0, 2048)],
  ['64 KB prompt', prose.repeat(Math.ceil(65536 / prose.length)).slice(0, 65536)],
];
const RULES: [string, string][] = [
  ['SSN (the scenario)', SCENARIO_RULE],
  ['API key', 'sk-[A-Za-z0-9]{20,}'],
  ['email', '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}'],
  ['word list', '(?i)\\b(?:confidential|internal only|do not share|secret)\\b'],
];

function time(fn: () => unknown): number {
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < 100) {
    fn();
    n++;
  }
  const per = Math.max(1, Math.floor(n / 5));
  const rounds: number[] = [];
  for (let r = 0; r < 15; r++) {
    const t = performance.now();
    for (let i = 0; i < per; i++) fn();
    rounds.push(((performance.now() - t) * 1000) / per);
  }
  return median(rounds);
}

console.log('| pattern | text | native RegExp µs | RE2 (re2js) µs | ratio |');
console.log('|---|---|---:|---:|---:|');
for (const [label, rule] of RULES) {
  const re2 = compileBoundedRegex(rule, 'rule');
  // JavaScript has no inline (?i): the native baseline takes it as a flag.
  const native = rule.startsWith('(?i)') ? new RegExp(rule.slice(4), 'gi') : new RegExp(rule, 'g');
  for (const [textLabel, text] of TEXTS) {
    const a = nativeFirst(native, text);
    const b = findBounded(re2, text, 1)[0]?.[0] ?? -1;
    if (a !== b) throw new Error(`${label} on ${textLabel}: native found ${a}, RE2 ${b}`);
    const tn = time(() => nativeFirst(native, text));
    const tr = time(() => findBounded(re2, text, 1));
    console.log(`| ${label} | ${textLabel} | ${tn.toFixed(2)} | ${tr.toFixed(2)} | ${(tr / tn).toFixed(1)}x |`);
  }
}
