import { GUARDRAILS, type GuardrailChange, type GuardrailStoreOptions } from '../guardrail-store.js';
import { MemoryResourceStore } from './resource-store.js';

/** The embedded default: guardrails in this process only. */
export class MemoryGuardrailStore extends MemoryResourceStore<GuardrailChange> {
  constructor(opts: GuardrailStoreOptions = {}) {
    super(GUARDRAILS, opts);
  }
}
