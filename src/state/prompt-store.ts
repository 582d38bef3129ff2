import type { ResourceDraft, ResourceKind, ResourceRecord, ScopedResourceStore } from './resource-store.js';

/**
 * Prompt templates (the prompts API, bootstrap `prompts`): a versioned, scoped resource
 * (resource-store.ts) whose content is what a request renders (docs/prompts.md).
 */
export interface PromptContent {
  name: string;
  /** Default model: a request's own `model` wins. */
  model?: string;
  /** Chat messages whose text (string content, text parts) is a template; they come before the request's. */
  messages?: Record<string, unknown>[];
  /** The completions prompt (a template). */
  prompt?: string;
  /** Body fields a request gets unless it sets them itself. */
  parameters: Record<string, unknown>;
}

export type PromptRecord = ResourceRecord<PromptContent>;
export type PromptDraft = ResourceDraft<PromptContent>;
export type PromptStore = ScopedResourceStore<PromptContent>;

/** The prompt kind: slug fallback `prompt`, Redis keys under `pr:`. */
export const PROMPTS: ResourceKind<PromptContent> = {
  label: 'prompt',
  key: 'pr',
  content(c) {
    const out: PromptContent = { name: c.name, parameters: structuredClone(c.parameters) };
    if (c.model !== undefined) out.model = c.model;
    if (c.messages !== undefined) out.messages = structuredClone(c.messages);
    if (c.prompt !== undefined) out.prompt = c.prompt;
    return out;
  },
};
