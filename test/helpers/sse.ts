/** Reading the gateway's SSE output in tests (not a test file itself). */

export interface SseFrame {
  event?: string;
  data: string;
}

/** Parses a gateway SSE body (LF framing, as the gateway writes it) into frames; throws on any other line. */
export function parseSse(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.split('\n\n')) {
    if (block === '') continue;
    const frame: SseFrame = { data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) frame.event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
      else throw new Error(`unexpected SSE line: ${JSON.stringify(line)}`);
    }
    frame.data = data.join('\n');
    frames.push(frame);
  }
  return frames;
}

/** Content of chat chunk frames, concatenated. */
export function chatContent(frames: SseFrame[]): string {
  let out = '';
  for (const f of frames) {
    if (f.event !== undefined || f.data === '[DONE]') continue;
    const chunk = JSON.parse(f.data) as { choices?: { delta?: { content?: string } }[] };
    for (const c of chunk.choices ?? []) out += c.delta?.content ?? '';
  }
  return out;
}
