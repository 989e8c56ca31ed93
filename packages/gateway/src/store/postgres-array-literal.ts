/**
 * Columns of values as PostgreSQL's array literals, for `$n::text[]` and `$n::bigint[]`
 * parameters. The driver would build the same text itself, but it quotes numbers and runs two
 * replacements over every string; a batch sends tens of thousands of elements per statement, and
 * that escaping was a tenth of the API thread's time.
 */

/**
 * What JSON escapes that an array literal would read differently: control characters (`\n`, `\t`,
 * `\u0001`, …) and lone surrogates. A backslash followed by one of these letters can also be an
 * escaped backslash before the letter; such text takes the slower way, which is right for any.
 */
const JSON_ONLY_ESCAPE = /\\[bfnrtu]/;
const NEEDS_ESCAPING = /[\\"]/;
const ESCAPED_CHARACTERS = /[\\"]/g;

/**
 * `{"a","b",NULL}`. For everything but control characters and lone surrogates, JSON's strings are
 * the literal's quoted elements (a backslash before `"` and `\`), and its bare `null` is NULL, which
 * the literal reads in any case; JSON.stringify writes them all at once, natively.
 */
export function toPostgresTextArray(values: readonly (string | null | undefined)[]): string {
  const json = JSON.stringify(values);
  if (!JSON_ONLY_ESCAPE.test(json)) return `{${json.slice(1, -1)}}`;
  const elements = new Array<string>(values.length);
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (value === null || value === undefined) elements[index] = 'NULL';
    else if (NEEDS_ESCAPING.test(value)) elements[index] = `"${value.replace(ESCAPED_CHARACTERS, '\\$&')}"`;
    else elements[index] = `"${value}"`;
  }
  return `{${elements.join(',')}}`;
}

/** `{1,2,NULL}`: whole numbers bare. */
export function toPostgresBigintArray(values: readonly (number | null | undefined)[]): string {
  const elements = new Array<string>(values.length);
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    elements[index] = value === null || value === undefined ? 'NULL' : String(value);
  }
  return `{${elements.join(',')}}`;
}
