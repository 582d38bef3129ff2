/**
 * Which model ids name the same model: the one normalisation the price table and everything that
 * matches a model use.
 */

/** Suffixes a dated or versioned model id carries beyond its family's name, removed one at a time. */
const VERSION_SUFFIXES = [
  /-v\d+(:\d+)?$/, // bedrock: -v1:0, -v2:0
  /-\d{4}-\d{2}-\d{2}$/, // openai: -2024-07-18
  /-\d{8}$/, // anthropic: -20241022
  /@\d{8}$/, // vertex: @20240229
  /-0\d\d$/, // vertex: -001, -002
];
/** Bedrock cross-region inference profiles: `us.anthropic.…`. */
const REGION_PREFIX = /^(us|eu|apac|us-gov|global)\./;

/**
 * The forms of a model id, most specific first: the id in lower case, then without its Bedrock
 * region prefix, then without each date or version suffix in turn; the last is the model's
 * normalised id (`GPT-4o-mini-2024-07-18` → `gpt-4o-mini`, `us.anthropic.claude-3-7-sonnet-20250219-v1:0`
 * → `anthropic.claude-3-7-sonnet`). The one place that says which ids name the same model: the
 * price table looks the forms up in order, and everything that matches a model (usage-limit
 * conditions and groups, model allow- and block-lists) compares normalised ids, so a model a
 * price applies to cannot escape a condition by its case or snapshot date.
 */
export function modelIdForms(model: string): string[] {
  let id = model.toLowerCase();
  const forms = [id];
  if (REGION_PREFIX.test(id)) forms.push((id = id.replace(REGION_PREFIX, '')));
  for (const suffix of VERSION_SUFFIXES) {
    if (suffix.test(id)) forms.push((id = id.replace(suffix, '')));
  }
  return forms;
}

const normalised = new Map<string, string>();
const NORMALISED_MAX = 1000;

/** The normalised id of a model (the last of `modelIdForms`); remembered per id, bounded. */
export function normalModelId(model: string): string {
  let id = normalised.get(model);
  if (id === undefined) {
    const forms = modelIdForms(model);
    id = forms[forms.length - 1]!;
    if (normalised.size >= NORMALISED_MAX) normalised.clear();
    normalised.set(model, id);
  }
  return id;
}
