import type { JsonResult, ProviderRequest } from '../types.js';
import type { ChatBridge } from './bridge.js';
import { messageObject } from './messages-answer.js';
import { messagesToChat } from './messages-request.js';
import { messagesChunk, messagesStreamEnd, messagesStreamStart, type MessagesStreamState } from './messages-stream.js';

type Json = Record<string, unknown>;

/** A chat completion → the message object (the chat usage kept for accounting). */
function fromChatJson(req: ProviderRequest, chat: JsonResult): JsonResult {
  const body = chat.body as Json;
  const message = messageObject(req.body ?? {}, body, body.usage ?? chat.usage);
  return chat.usage ? { body: message, usage: chat.usage } : { body: message };
}

/**
 * Anthropic's Messages API reached through chat completions, for every provider that does not
 * serve it itself: system, turns, tools and tool choice become chat's messages, tools and tool
 * choice (src/providers/bridges/messages-request.ts); the chat answer becomes a message object, its
 * stream Anthropic's named events (src/providers/bridges/messages-stream.ts).
 */
export const MESSAGES_BRIDGE: ChatBridge<MessagesStreamState> = {
  endpoint: 'messages',
  toChat: messagesToChat,
  fromChatJson,
  streamStart: (req) => messagesStreamStart(req.body ?? {}),
  fromChatChunk: messagesChunk,
  streamEnd: messagesStreamEnd,
};
