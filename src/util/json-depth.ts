/**
 * JSON from outside (request bodies, the inline config header, management bodies) is nested at most
 * MAX_JSON_DEPTH deep. `JSON.parse` itself copes with any depth, but what comes after does not: zod,
 * `JSON.stringify`, the usage estimate and the config compilers all recurse, and 5,000 levels
 * overflow the stack (a 500). Refusing at parse makes it a 400 that says why.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether JSON text nests objects and arrays deeper than `max`. A scan of the raw text (strings
 * skipped, escapes honoured), made only when the text is long enough to hold `max` + 1 openings,
 * so an ordinary body costs nothing. Meant for text `JSON.parse` accepts; on other text it still
 * ends, its answer then means nothing.
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  if (text.length <= 2 * max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}
