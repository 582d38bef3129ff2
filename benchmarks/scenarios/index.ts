/** The scenarios, in run order: one file each. */
import type { Scenario } from '../scenario.js';
import { throughput } from './throughput.js';
import { guardrails } from './guardrails.js';
import { routing } from './routing.js';
import { usageLimits } from './usage-limits.js';
import { cache } from './cache.js';
import { streams } from './streams.js';
import { streamsAnthropic } from './streams-anthropic.js';
import { streamsBedrock } from './streams-bedrock.js';
import { responses } from './responses.js';
import { messagesStream } from './messages-stream.js';

export const SCENARIOS: Scenario[] = [
  throughput,
  guardrails,
  routing,
  usageLimits,
  cache,
  streams,
  messagesStream,
  streamsAnthropic,
  streamsBedrock,
  responses,
];
