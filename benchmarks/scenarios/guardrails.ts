import { CHAT_BODY, configHeaders, upstreamTarget, type Scenario } from '../scenario.js';

/**
 * An input guardrail (regexMatch + wordCount) and an output guardrail (contains + characterCount),
 * deny on, whose checks pass on "hello" and the fake upstream's answer. The regex is the README's SSN
 * example with `not`: it scans the text and finds nothing, as a deny-list does on clean traffic.
 */
export const GUARDRAILS = {
  input_guardrails: [
    {
      'default.regexMatch': { rule: '\\b\\d{3}-\\d{2}-\\d{4}\\b', not: true },
      'default.wordCount': { minWords: 1, maxWords: 1000 },
      deny: true,
    },
  ],
  output_guardrails: [
    {
      'default.contains': { words: ['confidential', 'internal only'], operator: 'none' },
      'default.characterCount': { minCharacters: 1, maxCharacters: 100_000 },
      deny: true,
    },
  ],
};

type Hooks = { verdict: boolean; checks: unknown[] }[];

export const guardrails: Scenario = {
  id: 'guardrails',
  title: 'The throughput request as an inline config with an input guardrail (regexMatch + wordCount) and an output guardrail (contains + characterCount), deny on.',
  request: (up) => ({ headers: configHeaders({ ...upstreamTarget(up), ...GUARDRAILS }), body: CHAT_BODY }),
  check: (a) => {
    const hr = (JSON.parse(a.body) as { hook_results?: { before_request_hooks?: Hooks; after_request_hooks?: Hooks } }).hook_results;
    const hooks = [...(hr?.before_request_hooks ?? []), ...(hr?.after_request_hooks ?? [])];
    return hooks.length === 2 && hooks.every((h) => h.verdict && h.checks.length === 2) ? undefined : `both guardrails should run and pass: ${a.body.slice(0, 400)}`;
  },
};
