import { describe, expect, it } from 'vitest';
import { chunksToJson } from '../../src/cache/assemble.js';
import { requestTexts, responseInput, responseText, rewriteRequestText, rewriteResponseText } from '../../src/checks/text.js';

describe('check texts', () => {
  it('chat: text is the last user message, allText every message (parts included)', () => {
    const body = {
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: [{ type: 'text', text: 'U1a' }, { type: 'image_url', image_url: { url: 'x' } }, { type: 'text', text: 'U1b' }] },
        { role: 'assistant', content: null, tool_calls: [] },
        { role: 'user', content: 'U2' },
        { role: 'tool', content: 'T' },
      ],
    };
    expect(requestTexts('chat', body)).toEqual({ text: 'U2', allText: 'S\nU1a\nU1b\n\nU2\nT' });
    expect(requestTexts('chat', { messages: [{ role: 'system', content: 'only' }] }).text).toBe('only');
    expect(requestTexts('chat', undefined)).toEqual({ text: '', allText: '' });
  });

  it('completions and embeddings: strings and string arrays (token arrays ignored)', () => {
    expect(requestTexts('completions', { prompt: ['a', 'b'] })).toEqual({ text: 'b', allText: 'a\nb' });
    expect(requestTexts('completions', { prompt: [1, 2] })).toEqual({ text: '', allText: '' });
    expect(requestTexts('embeddings', { input: 'x' })).toEqual({ text: 'x', allText: 'x' });
  });

  it('response text: every choice; refusals count; an assembled stream reads like JSON', () => {
    expect(responseText('chat', { choices: [{ message: { content: 'A' } }, { message: { content: null, refusal: 'no' } }] })).toBe('A\nno');
    expect(responseText('completions', { choices: [{ text: 'x' }, { text: 'y' }] })).toBe('x\ny');
    const assembled = chunksToJson('chat', [
      { id: '1', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] },
      { id: '1', choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: 'stop' }] },
    ]);
    expect(responseInput({ endpoint: 'chat', body: { messages: [] }, response: { body: assembled, status: 200 } }).response!.text).toBe('Hello');
  });

  it('rewrites copy on write and say when nothing changed', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'abc' }, { role: 'user', content: 'zzz' }] };
    const next = rewriteRequestText('chat', body, (t) => t.replace('b', 'B'))!;
    expect(next.messages).toEqual([{ role: 'user', content: 'aBc' }, { role: 'user', content: 'zzz' }]);
    expect((next.messages as unknown[])[1]).toBe(body.messages[1]);
    expect(body.messages[0]!.content).toBe('abc');
    expect(rewriteRequestText('chat', body, (t) => t)).toBeUndefined();
    expect(rewriteRequestText('embeddings', { input: ['a', 'b'] }, (t) => t + '!')).toEqual({ input: ['a!', 'b!'] });
    expect(rewriteResponseText('completions', { choices: [{ text: 'a' }] }, (t) => t + '!')).toEqual({ choices: [{ text: 'a!' }] });
  });
  it('a Messages request: its top-level system (string or text blocks) first in allText, rewritten with the turns', () => {
    const body = { system: [{ type: 'text', text: 'sys A', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'hi A' }] };
    expect(requestTexts('messages', body)).toEqual({ text: 'hi A', allText: 'sys A\nhi A' });
    expect(requestTexts('messages', { system: 'S', messages: [] })).toEqual({ text: '', allText: 'S' });
    const next = rewriteRequestText('messages', body, (t) => t.replace('A', 'B'))!;
    expect(next).toEqual({ system: [{ type: 'text', text: 'sys B', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'hi B' }] });
    expect(rewriteRequestText('messages', { system: 'A', messages: [] }, (t) => t + '!')).toEqual({ system: 'A!', messages: [] });
    expect(rewriteRequestText('messages', body, (t) => t)).toBeUndefined();
  });
});
