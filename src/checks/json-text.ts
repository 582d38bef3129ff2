/**
 * The JSON value a text carries, for jsonSchema and jsonKeys: the whole text when it parses, else
 * the first ```json fenced block, else the span from the first `{` to the last `}`. Undefined when
 * none parses.
 */
const FENCE = /```(?:json)?[ \t]*\r?\n([\s\S]*?)```/i;

export function extractJson(text: string): { value: unknown } | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  const tryParse = (s: string): { value: unknown } | undefined => {
    try {
      return { value: JSON.parse(s) };
    } catch {
      return undefined;
    }
  };
  const whole = tryParse(t);
  if (whole) return whole;
  const fence = FENCE.exec(t);
  if (fence) {
    const inner = tryParse(fence[1]!.trim());
    if (inner) return inner;
  }
  const a = t.indexOf('{');
  const b = t.lastIndexOf('}');
  return a >= 0 && b > a ? tryParse(t.slice(a, b + 1)) : undefined;
}
