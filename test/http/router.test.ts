import { describe, expect, it } from 'vitest';
import { Router } from '../../src/http/router.js';

function router(): Router<string> {
  return new Router<string>()
    .add('POST', '/v1/chat/completions', 'chat')
    .add('GET', '/v1/models', 'models')
    .add('POST', '/v1/responses', 'create-response')
    .add('GET', '/v1/responses/:id', 'get-response')
    .add('DELETE', '/v1/responses/:id', 'delete-response')
    .add('GET', '/v1/responses/:id/input_items', 'input-items')
    .add('GET', '/v1/policies/usage-limits/:id', 'usage-limit')
    .add('GET', '/v1/a/:x/b/:y', 'two');
}

describe('Router', () => {
  it('finds exact paths by method, with no params (the same object every time)', () => {
    const r = router();
    const m = r.match('POST', '/v1/chat/completions');
    expect(m).toEqual({ handler: 'chat', params: {} });
    expect(r.match('POST', '/v1/chat/completions')).toBe(m);
    expect(r.match('POST', '/v1/responses')?.handler).toBe('create-response');
  });

  it('matches a pattern and hands over its parameters', () => {
    const r = router();
    expect(r.match('GET', '/v1/responses/resp_123')).toEqual({ handler: 'get-response', params: { id: 'resp_123' } });
    expect(r.match('DELETE', '/v1/responses/resp_123')).toEqual({ handler: 'delete-response', params: { id: 'resp_123' } });
    expect(r.match('GET', '/v1/responses/resp_123/input_items')).toEqual({ handler: 'input-items', params: { id: 'resp_123' } });
    expect(r.match('GET', '/v1/policies/usage-limits/ul-1')).toEqual({ handler: 'usage-limit', params: { id: 'ul-1' } });
    expect(r.match('GET', '/v1/a/1/b/2')).toEqual({ handler: 'two', params: { x: '1', y: '2' } });
  });

  it('percent-decodes parameters, and does not match one that does not decode', () => {
    const r = router();
    expect(r.match('GET', '/v1/responses/a%20b%2Fc')?.params).toEqual({ id: 'a b/c' });
    expect(r.match('GET', '/v1/responses/%zz')).toBeUndefined();
  });

  it.each([
    ['an empty parameter', 'GET', '/v1/responses/'],
    ['a parameter spanning two segments', 'GET', '/v1/responses/a/b'],
    ['a trailing slash', 'GET', '/v1/responses/a/'],
    ['a longer literal', 'GET', '/v1/responsesX/a'],
    ['a prefix of an exact path', 'POST', '/v1/chat'],
    ['an exact path plus a segment', 'POST', '/v1/chat/completions/x'],
    ['another method', 'PUT', '/v1/responses/a'],
    ['another method on an exact path', 'GET', '/v1/chat/completions'],
    ['regex characters taken literally', 'GET', '/v1Xmodels'],
  ])('does not match %s', (_label, method, path) => {
    expect(router().match(method, path)).toBeUndefined();
  });

  it('lists the methods of a known path or pattern for Allow, and nothing for an unknown path', () => {
    const r = router();
    expect(r.allowed('/v1/chat/completions')).toBe('POST');
    expect(r.allowed('/v1/responses/resp_1')).toBe('GET, DELETE');
    expect(r.allowed('/v1/responses')).toBe('POST');
    expect(r.allowed('/v1/nope')).toBeUndefined();
    expect(r.allowed('/v1/responses/a/b')).toBeUndefined();
  });

  it('prefers an exact path over a pattern, then patterns in the order added', () => {
    const r = new Router<string>().add('GET', '/v1/things/:id', 'by-id').add('GET', '/v1/things/special', 'special').add('GET', '/v1/:kind/special', 'kind');
    expect(r.match('GET', '/v1/things/special')?.handler).toBe('special');
    expect(r.match('GET', '/v1/things/other')).toEqual({ handler: 'by-id', params: { id: 'other' } });
    expect(r.match('GET', '/v1/others/special')).toEqual({ handler: 'kind', params: { kind: 'others' } });
    // a path served by an exact route and a pattern lists both's methods
    r.add('DELETE', '/v1/things/:id', 'delete');
    expect(r.allowed('/v1/things/special')).toBe('GET, DELETE');
  });

  it('refuses a route added twice and a malformed parameter', () => {
    expect(() => router().add('POST', '/v1/chat/completions', 'again')).toThrow(/added twice/);
    expect(() => router().add('GET', '/v1/responses/:id', 'again')).toThrow(/added twice/);
    expect(() => new Router().add('GET', '/v1/x/:', 'h')).toThrow(/:name/);
    expect(() => new Router().add('GET', '/v1/x/:a-b', 'h')).toThrow(/:name/);
    expect(() => new Router().add('GET', '/v1/:a/:a', 'h')).toThrow(/twice/);
    expect(() => new Router().add('GET', 'v1/x', 'h')).toThrow(/starts with \//);
  });
});
