import type { Provider, ProviderDescriptor } from '../types.js';
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
export function openAICompatible(descriptor: ProviderDescriptor): Provider<OpenAIStreamState> {
  return {
    descriptor,
    toProvider: (req, target, baseUrl) => toOpenAICompatible(descriptor, req, target, baseUrl),
    fromJson: fromOpenAIJson,
    fromError: fromOpenAIError,
    streamStart: (req) => openAIStreamStart(req, descriptor.injectStreamUsage === true),
    fromStreamEvent: fromOpenAIStreamEvent,
    streamEnd: openAIStreamEnd,
  };
}
