import type { Provider } from '../types.js';
import { BEDROCK } from './descriptor.js';
import { toBedrock } from './to-provider.js';
import { signBedrock } from './sign.js';
import { bedrockStreamEnd, bedrockStreamStart, fromBedrockError, fromBedrockJson, fromBedrockStreamEvent, type BedrockStreamState } from './from-provider.js';

/** Cloud provider B: Bedrock Converse / ConverseStream, SigV4-signed (or a Bedrock API key). */
export function bedrock(): Provider<BedrockStreamState> {
  return {
    descriptor: BEDROCK,
    toProvider: (req, target, baseUrl) => toBedrock(BEDROCK, req, target, baseUrl),
    prepare: signBedrock,
    fromJson: fromBedrockJson,
    fromError: fromBedrockError,
    streamStart: bedrockStreamStart,
    fromStreamEvent: fromBedrockStreamEvent,
    streamEnd: bedrockStreamEnd,
  };
}
