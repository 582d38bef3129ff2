/**
 * The texts checks read, taken from OpenAI-shaped bodies once per stage, and the body rewrites
 * mutators make. Pure functions over parsed JSON; a rewrite returns a new body (copy on write, the
 * input is never changed) or undefined when nothing changed.
 */
import type { CheckEndpoint, CheckInput } from './types.js';
import { rewriteContent, type Rewrite } from './rewrite-content.js';
import { responsesOutputText, responsesRequestTexts, rewriteResponsesOutput, rewriteResponsesRequest } from './responses-text.js';

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The text of one chat message's content: a string, or the `text` of its text parts joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content) {
    if (isObj(part) && typeof part.text === 'string') out = out === '' ? part.text : `${out}\n${part.text}`;
  }
  return out;
}

function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return [];
}

/** A CheckInput's `request`: the body and its texts. */
function requestPart(endpoint: CheckEndpoint, body: Json | undefined): CheckInput['request'] {
  const t = requestTexts(endpoint, body);
  return { body, text: t.text, allText: t.allText };
}

/** `text` (the latest turn) and `allText` (everything sent) of a request body; see CheckInput. */
export function requestTexts(endpoint: CheckEndpoint, body: Json | undefined): { text: string; allText: string } {
  if (!body) return { text: '', allText: '' };
  if (endpoint === 'responses') return responsesRequestTexts(body);
  if (endpoint === 'chat' || endpoint === 'messages') {
    // One pass, no arrays: the last user message's text (else the last message's), and every
    // message's text joined with "\n" (an empty one still takes its line). A Messages request's
    // top-level `system` comes first, as a chat request's system message does.
    const system = endpoint === 'messages' && body.system !== undefined ? contentText(body.system) : undefined;
    let allText = system ?? '';
    let n = system === undefined ? 0 : 1;
    let last = '';
    let user: string | undefined;
    if (Array.isArray(body.messages)) {
      for (const m of body.messages) {
        if (!isObj(m)) continue;
        const t = contentText(m.content);
        allText = n++ === 0 ? t : `${allText}\n${t}`;
        last = t;
        if (m.role === 'user') user = t;
      }
    }
    return { text: user ?? last, allText };
  }
  const list = strings(endpoint === 'completions' ? body.prompt : body.input);
  return { text: list[list.length - 1] ?? '', allText: list.join('\n') };
}

/** Every choice's text (chat: message content and refusal; completions: text), joined with "\n"; a Messages answer's text blocks. */
export function responseText(endpoint: CheckEndpoint, body: unknown): string {
  if (endpoint === 'responses') return responsesOutputText(body);
  // A Messages answer: its text blocks.
  if (endpoint === 'messages') return isObj(body) ? contentText(body.content) : '';
  if (!isObj(body) || !Array.isArray(body.choices)) return '';
  // Joined as they come (one choice, the common answer, makes no array and no join).
  let out: string | undefined;
  for (const c of body.choices) {
    if (!isObj(c)) continue;
    if (endpoint === 'chat') {
      const m = isObj(c.message) ? c.message : undefined;
      if (m) {
        const t = contentText(m.content);
        if (t !== '') out = out === undefined ? t : `${out}\n${t}`;
        if (typeof m.refusal === 'string') out = out === undefined ? m.refusal : `${out}\n${m.refusal}`;
      }
    } else if (typeof c.text === 'string') out = out === undefined ? c.text : `${out}\n${c.text}`;
  }
  return out ?? '';
}

function rewriteStrings(v: unknown, fn: Rewrite): unknown {
  if (typeof v === 'string') return fn(v);
  if (!Array.isArray(v)) return v;
  let changed = false;
  const out = v.map((x) => {
    if (typeof x !== 'string') return x;
    const n = fn(x);
    if (n !== x) changed = true;
    return n;
  });
  return changed ? out : v;
}

/**
 * Applies `fn` to every text of a request: each message's content (every role, text parts
 * included), each prompt, each input string. Returns the new body, or undefined when no text changed.
 */
export function rewriteRequestText(endpoint: CheckEndpoint, body: Json | undefined, fn: Rewrite): Json | undefined {
  if (!body) return undefined;
  if (endpoint === 'responses') return rewriteResponsesRequest(body, fn);
  if (endpoint === 'messages') return rewriteMessagesRequest(body, fn);
  if (endpoint === 'chat') {
    if (!Array.isArray(body.messages)) return undefined;
    let changed = false;
    const messages = body.messages.map((m) => {
      if (!isObj(m)) return m;
      const c = rewriteContent(m.content, fn);
      if (c === m.content) return m;
      changed = true;
      return { ...m, content: c };
    });
    return changed ? { ...body, messages } : undefined;
  }
  const key = endpoint === 'completions' ? 'prompt' : 'input';
  const next = rewriteStrings(body[key], fn);
  return next === body[key] ? undefined : { ...body, [key]: next };
}

/** A Messages request's `system` (a string or text blocks) and turns rewritten; undefined when unchanged. */
function rewriteMessagesRequest(body: Json, fn: Rewrite): Json | undefined {
  const system = body.system === undefined ? undefined : rewriteContent(body.system, fn);
  const turns = rewriteRequestText('chat', body, fn);
  if (system === body.system) return turns;
  return { ...(turns ?? body), system };
}

/** Applies `fn` to every choice's text of a response; the new body, or undefined when unchanged. */
export function rewriteResponseText(endpoint: CheckEndpoint, body: unknown, fn: Rewrite): Json | undefined {
  if (endpoint === 'responses') return rewriteResponsesOutput(body, fn);
  if (endpoint === 'messages') {
    if (!isObj(body)) return undefined;
    const content = rewriteContent(body.content, fn);
    return content === body.content ? undefined : { ...body, content };
  }
  if (!isObj(body) || !Array.isArray(body.choices)) return undefined;
  let changed = false;
  const choices = body.choices.map((c) => {
    if (!isObj(c)) return c;
    if (endpoint === 'chat') {
      if (!isObj(c.message)) return c;
      const content = rewriteContent(c.message.content, fn);
      if (content === c.message.content) return c;
      changed = true;
      return { ...c, message: { ...c.message, content } };
    }
    if (typeof c.text !== 'string') return c;
    const text = fn(c.text);
    if (text === c.text) return c;
    changed = true;
    return { ...c, text };
  });
  return changed ? { ...body, choices } : undefined;
}

/**
 * Rewrites the text of the phase `input` is in; the `transformed` of a CheckOutcome, or undefined
 * when nothing changed.
 */
export function rewritePhaseText(input: CheckInput, fn: Rewrite): { request?: { body: Json }; response?: { body: unknown } } | undefined {
  if (input.phase === 'response') {
    const body = rewriteResponseText(input.endpoint, input.response?.body, fn);
    return body ? { response: { body } } : undefined;
  }
  const body = rewriteRequestText(input.endpoint, input.request.body, fn);
  return body ? { request: { body } } : undefined;
}

/** The text a check reads in its phase: the response's, or the request's latest turn / all of it. */
export function phaseText(input: CheckInput, which: 'text' | 'allText'): string {
  return input.phase === 'response' ? (input.response?.text ?? '') : input.request[which];
}

export interface InputParts {
  endpoint: CheckEndpoint;
  body: Json | undefined;
  metadata?: Record<string, unknown>;
  headers?: Record<string, string | string[] | undefined>;
  provider?: string;
  traceId?: string;
}

/** A stage's CheckInput: the texts extracted once for all its checks. */
function checkInput(p: InputParts, phase: CheckInput['phase'], response: CheckInput['response']): CheckInput {
  return {
    phase,
    endpoint: p.endpoint,
    request: requestPart(p.endpoint, p.body),
    metadata: p.metadata ?? {},
    headers: p.headers ?? {},
    model: typeof p.body?.model === 'string' ? p.body.model : undefined,
    provider: p.provider,
    traceId: p.traceId,
    response,
  };
}

/** The CheckInput of a request-phase stage. */
export function requestInput(p: InputParts): CheckInput {
  return checkInput(p, 'request', undefined);
}

/** The CheckInput of a response-phase stage; `response.body` is a JSON answer or an assembled stream. */
export function responseInput(p: InputParts & { response: { body: unknown; status: number } }): CheckInput {
  return checkInput(p, 'response', { body: p.response.body, status: p.response.status, text: responseText(p.endpoint, p.response.body) });
}

/**
 * The input a later check sees after a mutator changed a body: the changed body's texts extracted
 * again, the rest shared with `input`.
 */
export function withBodies(input: CheckInput, t: { request?: { body: Json }; response?: { body: unknown } }): CheckInput {
  const next: CheckInput = { ...input };
  if (t.request) {
    const body = t.request.body;
    next.request = requestPart(input.endpoint, body);
    next.model = typeof body.model === 'string' ? body.model : undefined;
  }
  if (t.response && input.response) {
    const body = t.response.body;
    next.response = { body, text: responseText(input.endpoint, body), status: input.response.status };
  }
  return next;
}
