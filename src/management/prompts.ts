import { parseOrThrow } from '../config/issues.js';
import { declaredPromptId, PromptBodySchema, type PromptBody, type PromptEntry } from '../config/prompts.js';
import type { DeclareOutcome } from '../state/resource-store.js';
import type { PromptContent, PromptRecord, PromptStore } from '../state/prompt-store.js';
import { ResourceService } from './resources.js';

/** A body (API or bootstrap entry) → a version's content: absent optional fields left out. */
function contentOf(b: Omit<PromptBody, 'workspace_id' | 'organisation_id'>): PromptContent {
  const c: PromptContent = { name: b.name, parameters: b.parameters };
  if (b.model !== undefined) c.model = b.model;
  if (b.messages !== undefined) c.messages = b.messages;
  if (b.prompt !== undefined) c.prompt = b.prompt;
  return c;
}

/**
 * The prompts API's logic (resources.ts): POST, GET (list, one by id or slug, `?version_id=`), PUT
 * (a new version), DELETE, scoped by the caller's gateway key as the guardrails API is. A body is
 * validated whole (config/prompts.ts): the templates parse, parameters pass the request body schema.
 */
export class PromptsService extends ResourceService<PromptContent> {
  constructor(store: PromptStore) {
    super(store, {
      label: 'prompt',
      notFound: 'prompt_not_found',
      parse(body) {
        const { workspace_id, organisation_id, ...rest } = parseOrThrow(PromptBodySchema, body, 'invalid_request_body', 'request body');
        return { content: contentOf(rest), scope: { workspace_id, organisation_id } };
      },
    });
  }

  /**
   * The bootstrap file's `prompts`, at every start: each entry under its declared id (its `id`, else
   * one derived from its scope and name), created, given a new version when it changed, else left.
   */
  async declare(entries: readonly PromptEntry[]): Promise<{ record: PromptRecord; outcome: DeclareOutcome }[]> {
    const out = [];
    for (const e of entries) {
      const { id: _id, workspace_id, organisation_id, ...rest } = e;
      const scope: { workspace_id?: string; organisation_id?: string } = {};
      if (workspace_id !== undefined) scope.workspace_id = workspace_id;
      if (organisation_id !== undefined) scope.organisation_id = organisation_id;
      out.push(await this.store.declare(declaredPromptId(e), { ...contentOf(rest), ...scope }));
    }
    return out;
  }
}
