const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A rewrite of one text. */
export type Rewrite = (text: string) => string;

/** A message content's texts rewritten (a string, or its text parts); the same value when unchanged. */
export function rewriteContent(content: unknown, fn: Rewrite): unknown {
  if (typeof content === 'string') {
    const next = fn(content);
    return next === content ? content : next;
  }
  if (!Array.isArray(content)) return content;
  let changed = false;
  const parts = content.map((p) => {
    if (!isObj(p) || typeof p.text !== 'string') return p;
    const next = fn(p.text);
    if (next === p.text) return p;
    changed = true;
    return { ...p, text: next };
  });
  return changed ? parts : content;
}
