import { l2normalize } from '../util/vector.js';

/**
 * The built-in embedder: lexical, offline, deterministic. Words (lower-cased letters and digits), word
 * bigrams and character trigrams of each word are hashed (FNV-1a) into a signed feature vector of
 * `dims` dimensions and L2-normalised. Similar wording gives similar vectors; it knows nothing of
 * meaning (synonyms, paraphrase): configure an embeddings target for that.
 */
export const LOCAL_EMBEDDING_DIMS = 256;

function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function addFeature(v: Float32Array, feature: string, weight: number): void {
  const h = fnv1a(feature);
  const i = h % v.length;
  v[i]! += (h & 0x80000000 ? -1 : 1) * weight;
}

export function embedLocal(text: string, dims = LOCAL_EMBEDDING_DIMS): Float32Array {
  const v = new Float32Array(dims);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  let prev: string | undefined;
  for (const w of words) {
    addFeature(v, `w:${w}`, 1);
    if (prev !== undefined) addFeature(v, `b:${prev} ${w}`, 0.7);
    const padded = `^${w}$`;
    for (let i = 0; i + 3 <= padded.length; i++) addFeature(v, `c:${padded.slice(i, i + 3)}`, 0.35);
    prev = w;
  }
  l2normalize(v, v); // in place; a text with no words stays the zero vector
  return v;
}

/** The text a semantic cache compares: the conversation without the system prompt, or the prompt. */
export function promptText(body: Record<string, unknown> | undefined): string | undefined {
  if (!body) return undefined;
  const messages = body.messages as { role?: string; content?: unknown }[] | undefined;
  if (Array.isArray(messages)) {
    const parts: string[] = [];
    for (const m of messages) {
      if (m.role === 'system' || m.role === 'developer') continue;
      if (typeof m.content === 'string') parts.push(`${m.role}: ${m.content}`);
      else if (Array.isArray(m.content)) {
        for (const p of m.content as { type?: string; text?: string }[]) if (p.type === 'text' && p.text) parts.push(`${m.role}: ${p.text}`);
      }
    }
    return parts.length ? parts.join('\n') : undefined;
  }
  const prompt = body.prompt;
  if (typeof prompt === 'string') return prompt;
  if (Array.isArray(prompt) && prompt.every((p) => typeof p === 'string')) return prompt.join('\n');
  return undefined;
}
