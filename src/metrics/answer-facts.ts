import type { AnswerFacts } from './tracing.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The response model and finish reasons of an answer's JSON body, in the shapes the front doors
 * answer with: chat and completions (`model`, `choices[].finish_reason`), messages (`model`,
 * `stop_reason`), responses (`model`, under `response` in its stream events), embeddings (`model`).
 * Undefined when the body says neither. Read only when tracing is on.
 */
export function answerFacts(body: unknown): AnswerFacts | undefined {
  if (!isObject(body)) return undefined;
  const inner = isObject(body.response) ? body.response : isObject(body.message) ? body.message : body;
  const facts: AnswerFacts = {};
  const model = str(inner.model);
  if (model) facts.model = model;
  const reasons: string[] = [];
  if (Array.isArray(inner.choices)) {
    for (const c of inner.choices) {
      const r = isObject(c) ? str(c.finish_reason) : undefined;
      if (r) reasons.push(r);
    }
  }
  const stop = str(inner.stop_reason) ?? (isObject(body.delta) ? str(body.delta.stop_reason) : undefined);
  if (stop) reasons.push(stop);
  if (reasons.length > 0) facts.finishReasons = reasons;
  return facts.model || facts.finishReasons ? facts : undefined;
}

/**
 * The same of one stream event's data, parsed only when it can say something new: a finish or stop
 * reason (OpenAI's last chunks carry the model too), Anthropic's `message_start` (the model), the
 * Responses API's `response.created` or `response.completed`.
 */
export function chunkFacts(data: string): AnswerFacts | undefined {
  if (!(data.includes('_reason":"') || data.includes('"message_start"') || data.includes('"response.c'))) return undefined;
  try {
    return answerFacts(JSON.parse(data));
  } catch {
    return undefined;
  }
}

/** A request body's output-token cap: `max_tokens`, `max_completion_tokens` or `max_output_tokens`. */
export function maxTokensOf(body: Record<string, unknown> | undefined): number | undefined {
  if (!body) return undefined;
  const v = body.max_tokens ?? body.max_completion_tokens ?? body.max_output_tokens;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
