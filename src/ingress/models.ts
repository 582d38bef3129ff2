import { pickModel } from '../operators/pick-model.js';
import { openAIBodylessFormat } from './openai.js';

/**
 * OpenAI's model list, GET /v1/models, and the openai SDKs' models.retrieve, GET /v1/models/:id: the
 * listing's entry, asked of the same plan as the list (conditional routing sees that path). An id
 * with a `/` comes percent-encoded, as the SDKs send it.
 */
export const MODELS = openAIBodylessFormat('models', [
  { method: 'GET', path: '/v1/models' },
  { method: 'GET', path: '/v1/models/:id', pathname: '/v1/models', answer: (params) => pickModel(params.id!) },
]);
