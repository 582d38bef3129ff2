import type { Provider } from '../types.js';
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

/** An OpenAI-compatible provider is its descriptor plus the shared functions. */
export function openAICompatible(descriptor: OpenAICompatibleDescriptor): Provider<OpenAIStreamState> {
  const quirks = descriptor.quirks;
  return {
    descriptor,
    toProvider: (req, target, baseUrl) => toOpenAICompatible(descriptor, req, target, baseUrl),
    fromJson: quirks?.finishReasons ? (req, text) => fromOpenAIJson(req, text, quirks) : (req, text) => fromOpenAIJson(req, text),
    fromError: fromOpenAIError,
    streamStart: (req) => openAIStreamStart(req, descriptor.injectStreamUsage === true, quirks),
    fromStreamEvent: fromOpenAIStreamEvent,
    streamEnd: openAIStreamEnd,
  };
}
