import { describe, expect, it } from 'vitest';
import { requestInput } from '../../src/checks/text.js';
import { expectInvalid, run } from './_helpers.js';

const chat = (messages: unknown[]) => requestInput({ endpoint: 'chat', body: { model: 'm', messages } });
const messagesOf = (out: Awaited<ReturnType<typeof run>>) => out.transformed?.request?.body.messages;

describe('addPrefix', () => {
  it('prepends to the first user message by default and passes', async () => {
    const out = await run('addPrefix', { prefix: 'Be brief. ' }, chat([{ role: 'system', content: 's' }, { role: 'user', content: 'hi' }, { role: 'user', content: 'again' }]));
    expect(out.verdict).toBe(true);
    expect(messagesOf(out)).toEqual([{ role: 'system', content: 's' }, { role: 'user', content: 'Be brief. hi' }, { role: 'user', content: 'again' }]);
  });

  it('prepends to the first text part of content parts', async () => {
    const out = await run('addPrefix', { prefix: 'P: ' }, chat([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'u' } }, { type: 'text', text: 'look' }] }]));
    expect(messagesOf(out)).toEqual([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'u' } }, { type: 'text', text: 'P: look' }] }]);
  });

  it('adds a system message first when there is none; applyToRole picks the role', async () => {
    const out = await run('addPrefix', { prefix: 'You are terse.', applyToRole: 'system' }, chat([{ role: 'user', content: 'hi' }]));
    expect(messagesOf(out)).toEqual([{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'hi' }]);
  });

  it('on a Messages request the system role is its top-level system: prefixed, set, a block of its own, or left alone', async () => {
    const msgs = (extra: Record<string, unknown>) => requestInput({ endpoint: 'messages', body: { model: 'm', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }], ...extra } });
    const body = (out: Awaited<ReturnType<typeof run>>) => out.transformed?.request?.body;
    const blocks = [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }];
    expect(body(await run('addPrefix', { prefix: 'X ', applyToRole: 'system' }, msgs({ system: 's' })))?.system).toBe('X s');
    expect(body(await run('addPrefix', { prefix: 'X ', applyToRole: 'system' }, msgs({ system: blocks })))?.system).toEqual([{ ...blocks[0], text: 'X s' }]);
    expect(body(await run('addPrefix', { prefix: 'X', applyToRole: 'developer' }, msgs({})))?.system).toBe('X');
    expect(body(await run('addPrefix', { prefix: 'X', applyToRole: 'system', addToExisting: false }, msgs({ system: 's' })))?.system).toEqual([
      { type: 'text', text: 'X' },
      { type: 'text', text: 's' },
    ]);
    expect((await run('addPrefix', { prefix: 'X', applyToRole: 'system', onlyIfEmpty: true }, msgs({ system: blocks }))).transformed).toBeUndefined();
    expect(body(await run('addPrefix', { prefix: 'X', applyToRole: 'system' }, msgs({})))?.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('addToExisting: false inserts a new message; onlyIfEmpty leaves an existing one alone', async () => {
    const out = await run('addPrefix', { prefix: 'X', applyToRole: 'system', addToExisting: false }, chat([{ role: 'system', content: 's' }]));
    expect(messagesOf(out)).toEqual([{ role: 'system', content: 'X' }, { role: 'system', content: 's' }]);
    const same = await run('addPrefix', { prefix: 'X', applyToRole: 'system', onlyIfEmpty: true }, chat([{ role: 'system', content: 's' }]));
    expect(same.transformed).toBeUndefined();
  });

  it('prefixes completion prompts; leaves embeddings alone', async () => {
    const out = await run('addPrefix', { prefix: '> ' }, requestInput({ endpoint: 'completions', body: { model: 'm', prompt: ['a', 'b'] } }));
    expect(out.transformed?.request?.body.prompt).toEqual(['> a', '> b']);
    const emb = await run('addPrefix', { prefix: '> ' }, requestInput({ endpoint: 'embeddings', body: { model: 'm', input: 'a' } }));
    expect(emb).toEqual({ verdict: true, data: { skipped: 'embeddings' } });
  });

  it('refuses bad parameters', () => {
    expectInvalid('addPrefix', {}, 'prefix');
    expectInvalid('addPrefix', { prefix: 'x', applyToRole: 'tool' }, 'applyToRole');
  });
});
