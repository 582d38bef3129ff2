import { GatewayError } from '../../errors/gateway-error.js';
import type { JsonResult, ProviderRequest } from '../types.js';
import type { ChatBridge } from './bridge.js';
import { newId, outputItems, responseObject, responsesUsage, statusOf } from './responses-object.js';
import { responsesToChat } from './responses-request.js';
import { responsesChunk, responsesStreamEnd, responsesStreamStart, type ResponsesStreamState } from './responses-stream.js';

type Json = Record<string, unknown>;

/** A chat completion → the response object (the gateway's own `resp_…` id; the chat usage kept for accounting). */
function fromChatJson(req: ProviderRequest, chat: JsonResult): JsonResult {
  const body = chat.body as Json;
  const choice = (body.choices as Json[] | undefined)?.[0];
  if (!choice) throw new GatewayError('upstream_invalid_response', 'The provider answered without a choice.');
  const { status, incomplete_details } = statusOf(choice.finish_reason);
  const now = Math.floor(Date.now() / 1000);
  const response = responseObject(req.body ?? {}, {
    id: newId('resp'),
    created_at: typeof body.created === 'number' ? body.created : now,
    completed_at: now,
    model: body.model,
    status,
    incomplete_details,
    output: outputItems(choice.message as Json | undefined, status === 'completed' ? 'completed' : 'incomplete'),
    usage: responsesUsage(body.usage ?? chat.usage),
  });
  return chat.usage ? { body: response, usage: chat.usage } : { body: response };
}

/**
 * The Responses API reached through chat completions: input items, tools and text format become
 * chat's messages, tools and response format; the chat answer becomes the response object, its
 * stream the Responses API's named events (src/providers/bridges/responses-stream.ts).
 */
export const RESPONSES_BRIDGE: ChatBridge<ResponsesStreamState> = {
  endpoint: 'responses',
  toChat: responsesToChat,
  fromChatJson,
  streamStart: (req) => responsesStreamStart(req.body ?? {}, Date.now()),
  fromChatChunk: responsesChunk,
  streamEnd: responsesStreamEnd,
};
