import { z } from 'zod';
import { phaseText } from './text.js';
import type { CheckDef } from './types.js';

/** Formats (the names configs for other gateways use) and the fence tags that mean each. */
const FORMATS = {
  SQL: ['sql', 'mysql', 'postgresql', 'postgres', 'psql', 'sqlite', 'plsql', 'tsql'],
  Python: ['python', 'py', 'python3'],
  TypeScript: ['typescript', 'ts', 'tsx'],
  JavaScript: ['javascript', 'js', 'jsx', 'mjs', 'cjs', 'node'],
  Java: ['java'],
  'C#': ['csharp', 'cs', 'c#'],
  'C++': ['cpp', 'c++', 'cxx', 'cc', 'hpp'],
  C: ['c', 'h'],
  Ruby: ['ruby', 'rb'],
  PHP: ['php'],
  Swift: ['swift'],
  Kotlin: ['kotlin', 'kt', 'kts'],
  Go: ['go', 'golang'],
  Rust: ['rust', 'rs'],
  Scala: ['scala'],
  R: ['r'],
  Perl: ['perl', 'pl'],
  Shell: ['shell', 'sh', 'bash', 'zsh', 'console', 'shellscript', 'powershell', 'ps1'],
  HTML: ['html', 'htm', 'xhtml'],
  CSS: ['css', 'scss', 'sass', 'less'],
  XML: ['xml', 'svg', 'xsl'],
  JSON: ['json', 'jsonc', 'json5'],
  YAML: ['yaml', 'yml'],
  Markdown: ['markdown', 'md'],
  Dockerfile: ['dockerfile', 'docker'],
} as const satisfies Record<string, readonly string[]>;

type Format = keyof typeof FORMATS;
const TAG_TO_FORMAT = new Map<string, Format>();
for (const [f, tags] of Object.entries(FORMATS) as [Format, readonly string[]][]) for (const t of tags) TAG_TO_FORMAT.set(t, f);

const Params = z.strictObject({ format: z.enum(Object.keys(FORMATS) as [Format, ...Format[]]).optional() });
type Params = z.infer<typeof Params>;

/** An opening fence at the start of a line: ``` or ~~~, then an optional language tag. */
const FENCE = /^[ \t]{0,3}(?:```|~~~)[ \t]*([^\s`]*)/gm;

/**
 * Passes when the text (every text sent, or the answer) contains a fenced code block — of `format`
 * when given (the fence's language tag, e.g. ```py for Python). Untagged blocks count only when no
 * format is asked for. `data.formats` lists the formats found.
 */
export const containsCode: CheckDef<Params> = {
  id: 'containsCode',
  params: Params,
  supportsNot: true,
  run(input, p) {
    const text = phaseText(input, 'allText');
    const formats = new Set<string>();
    let blocks = 0;
    let open = false;
    FENCE.lastIndex = 0;
    for (const m of text.matchAll(FENCE)) {
      // Fences alternate: opening, closing. Only an opening fence carries the language.
      open = !open;
      if (!open) continue;
      blocks++;
      const f = TAG_TO_FORMAT.get(m[1]!.toLowerCase());
      if (f) formats.add(f);
    }
    const verdict = p.format ? formats.has(p.format) : blocks > 0;
    return { verdict, data: { blocks, formats: [...formats] } };
  },
};
