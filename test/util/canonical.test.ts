import { describe, expect, it } from 'vitest';
import { canonicalBody } from '../../src/cache/key.js';
import { canonicalJson, sha256 } from '../../src/util/canonical.js';

describe('canonicalJson', () => {
  it('ignores key order at every depth', () => {
    const a = { model: 'm', messages: [{ role: 'user', content: 'hi', extra: { b: 1, a: { y: 2, x: 1 } } }], temperature: 0 };
    const b = { temperature: 0, messages: [{ extra: { a: { x: 1, y: 2 }, b: 1 }, content: 'hi', role: 'user' }], model: 'm' };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"messages":[{"content":"hi","extra":{"a":{"x":1,"y":2},"b":1},"role":"user"}],"model":"m","temperature":0}');
  });

  it('keeps array order', () => {
    expect(canonicalJson([1, 2, 3])).not.toBe(canonicalJson([3, 2, 1]));
    expect(canonicalJson({ m: [{ a: 1 }, { b: 2 }] })).not.toBe(canonicalJson({ m: [{ b: 2 }, { a: 1 }] }));
  });

  it('drops undefined properties, keeps null', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
    expect(canonicalJson({ a: { c: undefined, d: 2 } })).toBe('{"a":{"d":2}}');
    expect(canonicalJson({ a: null })).toBe('{"a":null}');
    expect(canonicalJson({ a: null })).not.toBe(canonicalJson({}));
  });

  it('distinguishes values and types', () => {
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
    expect(canonicalJson('x')).toBe('"x"');
    expect(canonicalJson(null)).toBe('null');
  });
});

describe('canonicalBody', () => {
  it('ignores stream and stream_options', () => {
    const plain = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(canonicalBody({ ...plain, stream: true, stream_options: { include_usage: true } })).toBe(canonicalBody(plain));
    expect(canonicalBody({ ...plain, stream: false })).toBe(canonicalBody(plain));
  });

  it('keeps every other field, including ones that only look delivery-related', () => {
    const plain = { model: 'm', prompt: 'p' };
    for (const extra of [{ n: 2 }, { temperature: 0.5 }, { user: 'u' }, { streaming: true }, { max_tokens: 5 }]) {
      expect(canonicalBody({ ...plain, ...extra })).not.toBe(canonicalBody(plain));
    }
  });

  it('is key-order independent and empty for no body', () => {
    expect(canonicalBody({ b: 1, a: 2 })).toBe(canonicalBody({ a: 2, b: 1 }));
    expect(canonicalBody(undefined)).toBe('');
  });

  it('sha256 is deterministic and sensitive', () => {
    expect(sha256('x')).toBe(sha256('x'));
    expect(sha256('x')).not.toBe(sha256('y'));
  });
});
