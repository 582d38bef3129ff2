/** Gateway → client SSE framing, in one place. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * One `data:` line per event. An upstream event may spread its JSON over several `data:` lines; a raw
 * CR or LF in valid JSON text can only be insignificant whitespace, so it becomes a space rather than
 * breaking the frame.
 */
export const sseData = (json: string): string =>
  `data: ${json.includes('\n') || json.includes('\r') ? json.replace(/\r\n|\r|\n/g, ' ') : json}\n\n`;

/** A named event (`event:` then `data:`), for front doors whose streams name each event (Anthropic's, the Responses API). */
export const sseEvent = (json: string, event: string): string => `event: ${event}\n${sseData(json)}`;

export const SSE_DONE = 'data: [DONE]\n\n';

/** A named error event: OpenAI's SDK treats `event: error` (and a data object with `error`) as a failure. */
export const sseError = (body: unknown): string => `event: error\ndata: ${JSON.stringify(body)}\n\n`;

/** A comment line: clients (the openai SDK included) ignore it; line breaks become spaces. */
export const sseComment = (text: string): string => `: ${text.replace(/\r\n|\r|\n/g, ' ')}\n\n`;
