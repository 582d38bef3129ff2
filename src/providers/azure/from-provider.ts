import { GatewayError } from '../../errors/gateway-error.js';
import {
  fromOpenAIJson,
  fromOpenAIStreamEvent,
  openAIStreamStart,
  type OpenAIStreamState,
} from '../openai-compatible/from-provider.js';
import type { JsonResult, ProviderRequest, StreamEvent, StreamStep, Target } from '../types.js';

/**
 * Azure answers in OpenAI's shape; its extras (`prompt_filter_results`, per-choice
 * `content_filter_results`, `content_filter_offsets`, the prompt-filter first chunk with `choices: []`)
 * stay in the body and chunks as sent. Azure's own `model` is kept; the target's `model_name`
 * (x-gateway-cloud-a-model-name) fills it only where Azure leaves it empty (the prompt-filter chunk).
 */

const modelNameOf = (target: Target | undefined): string | undefined => {
  const v = target?.extra?.model_name;
  return typeof v === 'string' ? v : undefined;
};

export function fromAzureJson(req: ProviderRequest, text: string, target?: Target): JsonResult {
  const r = fromOpenAIJson(req, text);
  const name = modelNameOf(target);
  const body = r.body as Record<string, unknown>;
  if (name === undefined || (typeof body.model === 'string' && body.model !== '')) return r;
  return { body: { ...body, model: name }, usage: r.usage };
}

export interface AzureStreamState extends OpenAIStreamState {
  modelName?: string;
}

export function azureStreamStart(req: ProviderRequest, target?: Target): AzureStreamState {
  const s: AzureStreamState = openAIStreamStart(req, true);
  const name = modelNameOf(target);
  if (name !== undefined) s.modelName = name;
  return s;
}

/** Empty `model` (`"model":""`, the prompt-filter chunk): a cheap text test before any re-serialisation. */
const EMPTY_MODEL = '"model":""';

export function fromAzureStreamEvent(state: AzureStreamState, ev: StreamEvent): StreamStep<AzureStreamState> {
  const step = fromOpenAIStreamEvent(state, ev) as StreamStep<AzureStreamState>;
  const name = state.modelName;
  if (name === undefined) return step;
  for (const c of step.chunks) {
    if (c.data.includes(EMPTY_MODEL)) c.data = JSON.stringify({ ...(JSON.parse(c.data) as object), model: name });
  }
  return step;
}

/**
 * Azure AI Foundry: `GET /info` answers `{model_name, model_type, model_provider_name}` (one model per
 * endpoint) → OpenAI's model list with that one model. Other endpoints are OpenAI-shaped.
 */
export function fromAzureAIJson(req: ProviderRequest, text: string): JsonResult {
  const r = fromOpenAIJson(req, text);
  if (req.endpoint !== 'models') return r;
  const info = r.body as Record<string, unknown>;
  if (typeof info.model_name !== 'string') {
    throw new GatewayError('upstream_invalid_response', 'The provider answered /info without a model_name.');
  }
  const model: Record<string, unknown> = { id: info.model_name, object: 'model', created: 0, owned_by: info.model_provider_name ?? 'azure-ai' };
  if (typeof info.model_type === 'string') model.model_type = info.model_type;
  return { body: { object: 'list', data: [model] } };
}
