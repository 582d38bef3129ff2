/** The scenarios, in run order. Add new ones here (one file per scenario). */
import type { Scenario } from '../scenario.js';
import { throughput } from './throughput.js';
import { fixedRate } from './fixed-rate.js';
import { streams } from './streams.js';
import { providerStreams } from './provider-streams.js';
import { logWarn } from './log-warn.js';
import { routingOverhead } from './routing-overhead.js';
import { routingExperiment } from './routing-experiment.js';
import { guardrails } from './guardrails.js';
import { cacheScenario } from './cache.js';
import { semantic } from './semantic.js';
import { usageLimits } from './usage-limits.js';

export const SCENARIOS: Scenario[] = [throughput, fixedRate, streams, providerStreams, logWarn, routingOverhead, routingExperiment, guardrails, usageLimits, cacheScenario, semantic];
