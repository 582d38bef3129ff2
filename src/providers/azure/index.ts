import type { Provider } from '../types.js';
import {
  fromOpenAIError,
  fromOpenAIStreamEvent,
  openAIStreamEnd,
  openAIStreamStart,
  type OpenAIStreamState,
} from '../openai-compatible/from-provider.js';
import { AZURE_AI, AZURE_OPENAI } from './descriptors.js';
import { toAzureAI, toAzureOpenAI } from './to-provider.js';
import { azureStreamStart, fromAzureAIJson, fromAzureJson, fromAzureStreamEvent, type AzureStreamState } from './from-provider.js';

/** Azure OpenAI (`azure-openai`): deployment URLs and Azure auth; answers are OpenAI-shaped, extras kept. */
export function azureOpenAI(): Provider<AzureStreamState> {
  return {
    descriptor: AZURE_OPENAI,
    toProvider: (req, target, baseUrl) => toAzureOpenAI(AZURE_OPENAI, req, target, baseUrl),
    fromJson: fromAzureJson,
    fromError: fromOpenAIError,
    // The usage chunk is asked for (api-version ≥ 2024-09-01) and hidden when the client did not ask.
    streamStart: azureStreamStart,
    fromStreamEvent: fromAzureStreamEvent,
    streamEnd: openAIStreamEnd,
  };
}

/** Azure AI Foundry serverless and managed endpoints (`azure-ai`): the Azure AI model inference API. */
export function azureAI(): Provider<OpenAIStreamState> {
  return {
    descriptor: AZURE_AI,
    toProvider: (req, target, baseUrl) => toAzureAI(AZURE_AI, req, target, baseUrl),
    fromJson: fromAzureAIJson,
    fromError: fromOpenAIError,
    streamStart: (req) => openAIStreamStart(req, false),
    fromStreamEvent: fromOpenAIStreamEvent,
    streamEnd: openAIStreamEnd,
  };
}
