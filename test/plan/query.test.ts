import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { compileQuery, type QueryInput } from '../../src/plan/query.js';

const input: QueryInput = {
  metadata: { tier: 'pro', region: 'eu', score: 7, tags: ['beta', 'vip'], user: { plan: 'team', seats: 12 }, flag: false, nothing: null },
  params: {
    model: 'gpt-4o',
    temperature: 0.2,
    max_tokens: 500,
    stream: true,
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello there' },
    ],
  },
  url: { pathname: '/v1/chat/completions' },
};

const matches = (query: unknown, i: QueryInput = input): boolean => compileQuery(query, 'q')(i);

function compileError(query: unknown, path = 'config.strategy.conditions[0].query'): GatewayError {
  try {
    compileQuery(query, path);
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return e as GatewayError;
  }
  throw new Error('expected compileQuery to throw');
}

describe('compileQuery: operators', () => {
  it.each<[string, unknown, boolean]>([
    // implicit $eq
    ['implicit $eq, string, hit', { 'metadata.tier': 'pro' }, true],
    ['implicit $eq, string, miss', { 'metadata.tier': 'free' }, false],
    ['implicit $eq, number', { 'metadata.score': 7 }, true],
    ['implicit $eq, boolean false', { 'metadata.flag': false }, true],
    ['implicit $eq, null', { 'metadata.nothing': null }, true],
    ['implicit $eq, object (deep)', { 'metadata.user': { plan: 'team', seats: 12 } }, true],
    ['implicit $eq, object differs', { 'metadata.user': { plan: 'team', seats: 13 } }, false],
    ['implicit $eq, missing field', { 'metadata.absent': 'x' }, false],
    // $eq / $ne
    ['$eq hit', { 'metadata.region': { $eq: 'eu' } }, true],
    ['$eq miss', { 'metadata.region': { $eq: 'us' } }, false],
    ['$eq does not coerce types', { 'metadata.score': { $eq: '7' } }, false],
    ['$ne hit', { 'metadata.region': { $ne: 'us' } }, true],
    ['$ne miss', { 'metadata.region': { $ne: 'eu' } }, false],
    ['$ne on a missing field is true', { 'metadata.absent': { $ne: 'x' } }, true],
    // $gt $gte $lt $lte on numbers
    ['$gt hit', { 'metadata.score': { $gt: 6 } }, true],
    ['$gt equal is a miss', { 'metadata.score': { $gt: 7 } }, false],
    ['$gte equal', { 'metadata.score': { $gte: 7 } }, true],
    ['$gte miss', { 'metadata.score': { $gte: 8 } }, false],
    ['$lt hit', { 'params.temperature': { $lt: 0.5 } }, true],
    ['$lt equal is a miss', { 'params.temperature': { $lt: 0.2 } }, false],
    ['$lte equal', { 'params.temperature': { $lte: 0.2 } }, true],
    ['$lte miss', { 'params.temperature': { $lte: 0.1 } }, false],
    ['range ($gte and $lt together)', { 'params.max_tokens': { $gte: 100, $lt: 1000 } }, true],
    ['range, one side fails', { 'params.max_tokens': { $gte: 100, $lt: 500 } }, false],
    // comparisons on strings, and across types
    ['$gt on strings (lexicographic)', { 'metadata.tier': { $gt: 'free' } }, true],
    ['$lt on strings (lexicographic)', { 'metadata.tier': { $lt: 'free' } }, false],
    ['$gt across types is false', { 'metadata.tier': { $gt: 1 } }, false],
    ['$lt across types is false', { 'metadata.tier': { $lt: 1 } }, false],
    ['$gte on a missing field is false', { 'metadata.absent': { $gte: 0 } }, false],
    ['$lte on a missing field is false', { 'metadata.absent': { $lte: 0 } }, false],
    // $in / $nin
    ['$in hit', { 'metadata.region': { $in: ['us', 'eu'] } }, true],
    ['$in miss', { 'metadata.region': { $in: ['us', 'ap'] } }, false],
    ['$in against an array field matches any element', { 'metadata.tags': { $in: ['vip'] } }, true],
    ['$in against an array field, none', { 'metadata.tags': { $in: ['alpha'] } }, false],
    ['$in empty array', { 'metadata.region': { $in: [] } }, false],
    ['$nin hit', { 'metadata.region': { $nin: ['us', 'ap'] } }, true],
    ['$nin miss', { 'metadata.region': { $nin: ['eu'] } }, false],
    ['$nin against an array field', { 'metadata.tags': { $nin: ['beta'] } }, false],
    ['$nin on a missing field is true', { 'metadata.absent': { $nin: ['x'] } }, true],
    // $regex
    ['$regex hit', { 'params.model': { $regex: '^gpt-4' } }, true],
    ['$regex miss', { 'params.model': { $regex: '^claude' } }, false],
    ['$regex on a non-string is false', { 'metadata.score': { $regex: '7' } }, false],
    ['$regex on a missing field is false', { 'metadata.absent': { $regex: '.*' } }, false],
    // $exists
    ['$exists true, present', { 'metadata.tier': { $exists: true } }, true],
    ['$exists true, present but false', { 'metadata.flag': { $exists: true } }, true],
    ['$exists true, present but null', { 'metadata.nothing': { $exists: true } }, true],
    ['$exists true, absent', { 'metadata.absent': { $exists: true } }, false],
    ['$exists false, absent', { 'metadata.absent': { $exists: false } }, true],
    ['$exists false, present', { 'metadata.tier': { $exists: false } }, false],
    ['$exists below a scalar', { 'metadata.tier.deeper': { $exists: true } }, false],
    // field-level $not
    ['field $not of an operator', { 'metadata.region': { $not: { $eq: 'us' } } }, true],
    ['field $not of an operator, negated hit', { 'metadata.region': { $not: { $in: ['eu'] } } }, false],
    ['field $not of a plain value', { 'metadata.region': { $not: 'eu' } }, false],
    ['field $not of a regex', { 'params.model': { $not: { $regex: '^claude' } } }, true],
    // $and / $or / top-level $not
    ['$and all true', { $and: [{ 'metadata.tier': 'pro' }, { 'metadata.region': 'eu' }] }, true],
    ['$and one false', { $and: [{ 'metadata.tier': 'pro' }, { 'metadata.region': 'us' }] }, false],
    ['$or one true', { $or: [{ 'metadata.tier': 'free' }, { 'metadata.region': 'eu' }] }, true],
    ['$or none true', { $or: [{ 'metadata.tier': 'free' }, { 'metadata.region': 'us' }] }, false],
    ['top-level $not', { $not: { 'metadata.tier': 'free' } }, true],
    ['top-level $not, negated hit', { $not: { 'metadata.tier': 'pro' } }, false],
    ['nested $or inside $and', { $and: [{ $or: [{ 'metadata.tier': 'x' }, { 'metadata.score': { $gte: 5 } }] }, { 'url.pathname': '/v1/chat/completions' }] }, true],
    ['several fields are an implicit $and', { 'metadata.tier': 'pro', 'metadata.region': 'us' }, false],
    ['empty query matches everything', {}, true],
  ])('%s', (_name, query, expected) => {
    expect(matches(query)).toBe(expected);
  });
});

describe('compileQuery: fields', () => {
  it('reads params at any depth, array indices included', () => {
    expect(matches({ 'params.messages.0.role': 'system' })).toBe(true);
    expect(matches({ 'params.messages.1.role': 'user' })).toBe(true);
    expect(matches({ 'params.messages.1.content': { $regex: 'hello' } })).toBe(true);
    expect(matches({ 'params.messages.0.role': 'user' })).toBe(false);
    expect(matches({ 'params.messages.5.role': { $exists: false } })).toBe(true);
    expect(matches({ 'params.stream': true })).toBe(true);
  });

  it('reads nested metadata', () => {
    expect(matches({ 'metadata.user.plan': 'team' })).toBe(true);
    expect(matches({ 'metadata.user.seats': { $gt: 10 } })).toBe(true);
    expect(matches({ 'metadata.user.plan.x': { $exists: true } })).toBe(false);
  });

  it('reads url.pathname', () => {
    expect(matches({ 'url.pathname': '/v1/chat/completions' })).toBe(true);
    expect(matches({ 'url.pathname': { $regex: '/embeddings$' } })).toBe(false);
    expect(matches({ 'url.pathname': { $regex: '/embeddings$' } }, { ...input, url: { pathname: '/v1/embeddings' } })).toBe(true);
  });

  it('handles absent metadata and params', () => {
    const bare: QueryInput = { metadata: undefined, params: undefined, url: { pathname: '/' } };
    expect(matches({ 'metadata.tier': { $exists: false } }, bare)).toBe(true);
    expect(matches({ 'metadata.tier': 'pro' }, bare)).toBe(false);
    expect(matches({ 'params.model': { $ne: 'x' } }, bare)).toBe(true);
  });

  it('reads the input at evaluation time (one compiled query, many requests)', () => {
    const pred = compileQuery({ 'metadata.tier': 'pro' }, 'q');
    expect(pred({ ...input, metadata: { tier: 'pro' } })).toBe(true);
    expect(pred({ ...input, metadata: { tier: 'free' } })).toBe(false);
  });

  it('tests only the first 4096 characters of a long string with $regex', () => {
    const long = 'a'.repeat(5000) + 'needle';
    const i: QueryInput = { ...input, metadata: { text: long } };
    expect(matches({ 'metadata.text': { $regex: 'needle' } }, i)).toBe(false);
    expect(matches({ 'metadata.text': { $regex: '^a+$' } }, i)).toBe(true);
    expect(matches({ 'metadata.text': { $regex: 'needle' } }, { ...input, metadata: { text: 'a'.repeat(4000) + 'needle' } })).toBe(true);
  });
});

describe('compileQuery: invalid queries → invalid_config with the path', () => {
  const P = 'config.strategy.conditions[0].query';
  it.each<[string, unknown, string, RegExp]>([
    ['the query is not an object', 'tier', P, /a query is an object/],
    ['the query is an array', [{ 'metadata.x': 1 }], P, /a query is an object/],
    ['the query is null', null, P, /a query is an object/],
    ['unknown field operator', { 'metadata.tier': { $like: 'p%' } }, `${P}.metadata.tier.$like`, /unknown operator \$like/],
    ['unknown top-level operator', { $nor: [{ 'metadata.x': 1 }] }, `${P}.$nor`, /unknown top-level operator \$nor/],
    ['bad root field', { 'headers.authorization': 'x' }, `${P}.headers.authorization`, /must start with metadata\., params\. or url\./],
    ['url other than pathname', { 'url.host': 'x' }, `${P}.url.host`, /only url\.pathname/],
    ['url alone', { url: 'x' }, `${P}.url`, /only url\.pathname/],
    ['$in not an array', { 'metadata.tier': { $in: 'pro' } }, `${P}.metadata.tier.$in`, /\$in takes an array/],
    ['$nin not an array', { 'metadata.tier': { $nin: 'pro' } }, `${P}.metadata.tier.$nin`, /\$nin takes an array/],
    ['$exists not a boolean', { 'metadata.tier': { $exists: 1 } }, `${P}.metadata.tier.$exists`, /\$exists takes true or false/],
    ['$regex not a string', { 'params.model': { $regex: 5 } }, `${P}.params.model.$regex`, /\$regex takes a pattern/],
    ['$regex invalid', { 'params.model': { $regex: '(' } }, `${P}.params.model.$regex`, /invalid \$regex/],
    ['$regex too long', { 'params.model': { $regex: 'a'.repeat(257) } }, `${P}.params.model.$regex`, /at most 256 characters/],
    ['$and not an array', { $and: { 'metadata.x': 1 } }, `${P}.$and`, /\$and takes a non-empty array/],
    ['$or empty', { $or: [] }, `${P}.$or`, /\$or takes a non-empty array/],
    ['bad query inside $and, with its index', { $and: [{ 'metadata.x': 1 }, { 'metadata.y': { $bad: 1 } }] }, `${P}.$and.1.metadata.y.$bad`, /unknown operator/],
    ['bad query inside $or', { $or: [{ 'nope.x': 1 }] }, `${P}.$or.0.nope.x`, /must start with/],
    ['bad query inside top-level $not', { $not: { 'metadata.x': { $in: 1 } } }, `${P}.$not.metadata.x.$in`, /\$in takes an array/],
    ['bad operator inside field-level $not', { 'metadata.x': { $not: { $regex: '[' } } }, `${P}.metadata.x.$not.$regex`, /invalid \$regex/],
  ])('%s', (_name, query, param, message) => {
    const e = compileError(query, P);
    expect(e.code).toBe('invalid_config');
    expect(e.status).toBe(400);
    expect(e.param).toBe(param);
    expect(e.message.startsWith(`${param}: `)).toBe(true);
    expect(e.message).toMatch(message);
    expect(e.issues).toHaveLength(1);
    expect(e.issues![0]!.message).toMatch(message);
  });

  it('accepts a $regex of exactly 256 characters', () => {
    expect(() => compileQuery({ 'params.model': { $regex: 'a'.repeat(256) } }, 'q')).not.toThrow();
  });

  it('fails at compile time, not when evaluated', () => {
    expect(() => compileQuery({ $or: [{ 'metadata.x': 1 }, { 'metadata.y': { $in: 'no' } }] }, 'q')).toThrow(GatewayError);
  });
});
