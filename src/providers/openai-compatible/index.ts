import type { Provider, ProviderRequest } from '../types.js';
import type { OpenAICompatibleDescriptor } from './descriptors.js';
import { toOpenAICompatible } from './to-provider.js';
import {
  fromOpenAIError,
  fromOpenAIJson,
  fromOpenAIStreamEvent,
  openAIStreamEnd,
  openAIStreamStart,
  type OpenAIStreamState,
} from './from-provider.js';
import { fromResponsesEvent, fromResponsesJson, responsesStreamEnd, responsesStreamStart, type ResponsesPassState } from './responses-native.js';

type State = OpenAIStreamState | ResponsesPassState;
const isPass = (s: State): s is ResponsesPassState => !('hideUsageChunk' in s);

/**
 * An OpenAI-compatible provider is its descriptor plus the shared functions. A host whose descriptor
 * has a `responses` path serves the Responses API itself: those requests pass through
 * (src/providers/openai-compatible/responses-native.ts).
 */
export function openAICompatible(descriptor: OpenAICompatibleDescriptor): Provider<State> {
  const quirks = descriptor.quirks;
  const fromChatJson = quirks?.finishReasons ? (req: ProviderRequest, text: string) => fromOpenAIJson(req, text, quirks) : fromOpenAIJson;
  return {
    descriptor,
    toProvider: (req, target, baseUrl) => toOpenAICompatible(descriptor, req, target, baseUrl),
    fromJson: (req, text) => (req.endpoint === 'responses' ? fromResponsesJson(text) : fromChatJson(req, text)),
    fromError: fromOpenAIError,
    streamStart: (req) => (req.endpoint === 'responses' ? responsesStreamStart() : openAIStreamStart(req, descriptor.injectStreamUsage === true, quirks)),
    fromStreamEvent: (state, ev) => (isPass(state) ? fromResponsesEvent(state, ev) : fromOpenAIStreamEvent(state, ev)),
    streamEnd: (state) => (isPass(state) ? responsesStreamEnd(state) : openAIStreamEnd(state)),
  };
}
