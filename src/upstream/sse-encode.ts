/** Gateway → client SSE framing, in one place. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

export const sseData = (json: string): string => `data: ${json}\n\n`;

export const SSE_DONE = 'data: [DONE]\n\n';

/** A named error event: OpenAI's SDK treats `event: error` (and a data object with `error`) as a failure. */
export const sseError = (body: unknown): string => `event: error\ndata: ${JSON.stringify(body)}\n\n`;
