/** The hooks and guardrail entries of a config object (schema.ts): before and after hooks, input and output guardrails. */
import { z } from 'zod';
import { JsonObject, stringOrObject } from './schema-parts.js';

export const FeedbackSchema = z.strictObject({
  value: z.number().optional(),
  weight: z.number().optional(),
  metadata: JsonObject.optional(),
});

/** on_fail / on_success that may deny (before hooks, output guardrails). */
const OutcomeWithDeny = z.strictObject({
  feedback: FeedbackSchema.optional(),
  deny: z.boolean().optional(),
});

/** on_fail / on_success that holds only feedback (after hooks, input guardrails). */
const OutcomeFeedbackOnly = z.strictObject({
  feedback: FeedbackSchema.optional(),
});

export const HookCheckSchema = z.strictObject({
  id: z.string().min(1),
  parameters: JsonObject,
});

/**
 * Gateway additions to hooks and guardrail entries: `fail_on_error: false` lets a check that throws
 * or times out pass (fail open, by choice), `sequential` runs the checks one after the other, and
 * `timeout` is each check's time limit in ms.
 */
const HookRunOptions = {
  fail_on_error: z.boolean().optional(),
  sequential: z.boolean().optional(),
  timeout: z.number().int().min(1).max(60_000).optional(),
};

export const BeforeRequestHookSchema = z.strictObject({
  id: z.string().min(1),
  type: z.enum(['guardrail', 'mutator']).optional(),
  checks: z.array(HookCheckSchema).optional(),
  on_fail: OutcomeWithDeny.optional(),
  on_success: OutcomeWithDeny.optional(),
  ...HookRunOptions,
});

export const AfterRequestHookSchema = z.strictObject({
  id: z.string().min(1),
  type: z.enum(['guardrail', 'mutator']).optional(),
  checks: z.array(HookCheckSchema).optional(),
  async: z.boolean().optional(),
  ...HookRunOptions,
  on_fail: OutcomeFeedbackOnly.optional(),
  on_success: OutcomeFeedbackOnly.optional(),
});

const GuardrailCheckParams = z.record(z.string(), z.unknown(), {
  error: 'each extra key of a guardrail entry names a check and its value must be an object (the check parameters)',
});

function guardrailEntry(outcome: typeof OutcomeWithDeny | typeof OutcomeFeedbackOnly) {
  const obj = z
    .object({
      id: z.string().optional(),
      /** Pins a stored guardrail's version (with `id` naming it). */
      version_id: z.string().optional(),
      deny: z.boolean().optional(),
      async: z.boolean().optional(),
      on_fail: outcome.optional(),
      on_success: outcome.optional(),
      ...HookRunOptions,
    })
    .catchall(GuardrailCheckParams);
  return stringOrObject(z.string().min(1, 'a guardrail id must not be empty'), obj);
}

export const InputGuardrailEntrySchema = guardrailEntry(OutcomeFeedbackOnly);
export const OutputGuardrailEntrySchema = guardrailEntry(OutcomeWithDeny);

export type BeforeRequestHook = z.infer<typeof BeforeRequestHookSchema>;
export type AfterRequestHook = z.infer<typeof AfterRequestHookSchema>;
export type InputGuardrailEntry = z.infer<typeof InputGuardrailEntrySchema>;
export type OutputGuardrailEntry = z.infer<typeof OutputGuardrailEntrySchema>;
