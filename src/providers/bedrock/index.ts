import type { Provider } from '../types.js';
import { BEDROCK } from './descriptor.js';
import { toBedrock } from './to-provider.js';
import { signBedrock } from './sign.js';
import { bedrockStreamEnd, bedrockStreamStart, fromBedrockError, fromBedrockJson, fromBedrockStreamEvent, type BedrockStreamState } from './from-provider.js';
import { fromClaudeStreamEvent } from './claude.js';
import { fromNativeJson, nativeStreamEnd, nativeStreamStart, type NativeStreamState } from '../anthropic/native.js';

type State = BedrockStreamState | NativeStreamState;
const isNative = (s: State): s is NativeStreamState => (s as NativeStreamState).native === true;

/**
 * Cloud provider B: Bedrock Converse / ConverseStream, SigV4-signed (or a Bedrock API key); a
 * Messages request for Claude goes to InvokeModel as it is (claude.ts).
 */
export function bedrock(): Provider<State> {
  return {
    descriptor: BEDROCK,
    toProvider: (req, target, baseUrl) => toBedrock(BEDROCK, req, target, baseUrl),
    prepare: signBedrock,
    fromJson: (req, text) => (req.endpoint === 'messages' ? fromNativeJson(text) : fromBedrockJson(req, text)),
    fromError: fromBedrockError,
    streamStart: (req) => (req.endpoint === 'messages' ? nativeStreamStart() : bedrockStreamStart(req)),
    fromStreamEvent: (s, ev) => (isNative(s) ? fromClaudeStreamEvent(s, ev) : fromBedrockStreamEvent(s, ev)),
    streamEnd: (s) => (isNative(s) ? nativeStreamEnd(s) : bedrockStreamEnd(s)),
  };
}
