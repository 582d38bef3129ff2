import { describe, expect, it } from 'vitest';
import { detectPii, ibanValid, luhn, PII_CATEGORIES, verhoeff, type PiiCategory } from '../../src/checks/pii-detect.js';
import { requestInput } from '../../src/checks/text.js';
import { chatRequest, chatResponse, expectInvalid, run, verdict } from './_helpers.js';

const ALL = new Set<PiiCategory>(PII_CATEGORIES);
const found = (text: string): string[] => detectPii(text, ALL).map((m) => `${m.category}:${text.slice(m.start, m.end)}`);

/** A 12-digit Aadhaar-shaped number with a correct Verhoeff check digit. */
function aadhaar(first11: string): string {
  for (let d = 0; d <= 9; d++) if (verhoeff(first11 + d)) return first11 + d;
  throw new Error('unreachable');
}

describe('pii detection', () => {
  it('checksums: Luhn, IBAN mod-97, Verhoeff', () => {
    expect(luhn('4111111111111111')).toBe(true);
    expect(luhn('4111111111111112')).toBe(false);
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanValid('GB83WEST12345698765432')).toBe(false);
    expect(verhoeff('2363')).toBe(true); // the textbook example: 236 + check digit 3
    expect(verhoeff('2364')).toBe(false);
  });

  it.each([
    ['mail ada.l@example.co.uk now', 'EMAIL_ADDRESS:ada.l@example.co.uk'],
    ['call +44 20 7946 0958 today', 'PHONE_NUMBER:+44 20 7946 0958'],
    ['call (415) 555-2671', 'PHONE_NUMBER:(415) 555-2671'],
    ['call 415-555-2671.', 'PHONE_NUMBER:415-555-2671'],
    ['card 4111 1111 1111 1111 ok', 'CREDIT_CARD:4111 1111 1111 1111'],
    ['card 5500-0000-0000-0004', 'CREDIT_CARD:5500-0000-0000-0004'],
    ['iban GB82 WEST 1234 5698 7654 32 thanks', 'IBAN:GB82 WEST 1234 5698 7654 32'],
    ['iban DE89370400440532013000', 'IBAN:DE89370400440532013000'],
    ['host 192.168.1.20.', 'IP_ADDRESS:192.168.1.20'],
    ['v6 2001:db8::8a2e:370:7334 here', 'IP_ADDRESS:2001:db8::8a2e:370:7334'],
    ['ssn 123-45-6789', 'SSN:123-45-6789'],
    ['nino AB 12 34 56 C', 'UK_NINO:AB 12 34 56 C'],
    ['pan ABCPE1234F', 'PAN:ABCPE1234F'],
  ])('finds %j', (text, expected) => {
    expect(found(text)).toEqual([expected]);
  });

  it('finds an Aadhaar number with a valid Verhoeff digit, not one without', () => {
    const good = aadhaar('23456789012');
    const bad = good.slice(0, 11) + ((Number(good[11]) + 1) % 10);
    expect(found(`id ${good.slice(0, 4)} ${good.slice(4, 8)} ${good.slice(8)}`)).toEqual([`AADHAAR:${good.slice(0, 4)} ${good.slice(4, 8)} ${good.slice(8)}`]);
    expect(found(`id ${bad}`).filter((f) => f.startsWith('AADHAAR'))).toEqual([]);
  });

  it.each([
    ['a card failing Luhn', 'card 4111 1111 1111 1112'],
    ['an IBAN failing mod-97', 'iban GB83 WEST 1234 5698 7654 32'],
    ['an SSN in a 000 area', 'ssn 000-12-3456'],
    ['a date', 'on 2024-01-15 at 10:30:45'],
    ['a version number', 'version 1.2.3'],
    ['an out-of-range IPv4', 'addr 999.1.1.1'],
    ['a NINO with a banned prefix', 'GB 12 34 56 A'],
    ['plain prose', 'nothing personal here at all'],
  ])('does not report %s', (_, text) => {
    expect(found(text)).toEqual([]);
  });
});

describe('pii check', () => {
  it('no parameters: every category; fails when any is found, counts per category, never quotes them', async () => {
    const out = await run('pii', {}, chatRequest('me: a@b.io, card 4111111111111111, ssn 123-45-6789'));
    expect(out.verdict).toBe(false);
    expect(out.data).toEqual({ detected: { EMAIL_ADDRESS: 1, CREDIT_CARD: 1, SSN: 1 } });
    expect(JSON.stringify(out.data)).not.toMatch(/a@b\.io|4111|6789/);
    expect(await verdict('pii', {}, chatRequest('all clear'))).toBe(true);
  });

  it('categories narrow what is looked for', async () => {
    expect(await verdict('pii', { categories: ['CREDIT_CARD'] }, chatRequest('mail a@b.io'))).toBe(true);
    expect(await verdict('pii', { categories: ['EMAIL_ADDRESS'] }, chatRequest('mail a@b.io'))).toBe(false);
  });

  it('reads every message of the request and the answer', async () => {
    const input = requestInput({ endpoint: 'chat', body: { messages: [{ role: 'assistant', content: 'ip 10.0.0.1' }, { role: 'user', content: 'ok' }] } });
    expect(await verdict('pii', {}, input)).toBe(false);
    expect(await verdict('pii', {}, chatResponse('write to x@y.org'))).toBe(false);
  });

  it('redact: true replaces each match with [REDACTED_<CATEGORY>] in every message and passes', async () => {
    const input = requestInput({
      endpoint: 'chat',
      body: { model: 'm', messages: [{ role: 'system', content: 'admin a@b.io' }, { role: 'user', content: 'pay 4111 1111 1111 1111 from GB82WEST12345698765432' }] },
    });
    const out = await run('pii', { redact: true }, input);
    expect(out.verdict).toBe(true);
    expect(out.data).toEqual({ detected: { EMAIL_ADDRESS: 1, CREDIT_CARD: 1, IBAN: 1 }, redacted: true });
    expect(out.transformed?.request?.body.messages).toEqual([
      { role: 'system', content: 'admin [REDACTED_EMAIL_ADDRESS]' },
      { role: 'user', content: 'pay [REDACTED_CREDIT_CARD] from [REDACTED_IBAN]' },
    ]);
  });

  it('redacts the answer in the response phase', async () => {
    const out = await run('pii', { redact: true, categories: ['PHONE_NUMBER'] }, chatResponse('ring +1 415 555 2671'));
    expect(out.transformed?.response?.body).toMatchObject({ choices: [{ message: { content: 'ring [REDACTED_PHONE_NUMBER]' } }] });
  });

  it('refuses unknown categories and non-boolean redact', () => {
    expectInvalid('pii', { categories: ['NAME'] }, 'categories.0');
    expectInvalid('pii', { categories: [] }, 'categories');
    expectInvalid('pii', { redact: 'yes' }, 'redact');
  });
});

describe('pii detection at scale', () => {
  it('many matches and a large text are handled in one pass each, in order', () => {
    const text = Array.from({ length: 5000 }, (_, i) => `u${i}@ex.io 10.0.${i % 250}.1`).join(' ');
    const all = detectPii(text, ALL);
    expect(all).toHaveLength(10_000);
    expect(all.every((m, i) => i === 0 || m.start >= all[i - 1]!.end)).toBe(true);
    expect(all.filter((m) => m.category === 'EMAIL_ADDRESS')).toHaveLength(5000);
  });

  it('an overlapping lower-priority match is dropped (a phone number inside an e-mail address)', () => {
    expect(found('+14155552671')).toEqual(['PHONE_NUMBER:+14155552671']);
    expect(found('write +14155552671@example.com')).toEqual(['EMAIL_ADDRESS:+14155552671@example.com']);
  });
});
