/** A value of an array parameter: our rows hold only text, whole numbers and NULL. */
export type ArrayElement = string | number | null | undefined;

const NEEDS_ESCAPING = /[\\"]/;
const ESCAPED_CHARACTERS = /[\\"]/g;

/**
 * A column of values as PostgreSQL's array literal (`{"a","b",NULL}`, `{1,2,NULL}`), for a
 * `$n::text[]` or `$n::bigint[]` parameter. The driver would build the same text itself, but it
 * quotes numbers and runs two replacements over every string; a batch sends tens of thousands of
 * elements per statement, and that escaping was a tenth of the API thread's time.
 */
export function toPostgresArrayLiteral(values: readonly ArrayElement[]): string {
  const elements = new Array<string>(values.length);
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (value === null || value === undefined) elements[index] = 'NULL';
    else if (typeof value === 'number') elements[index] = String(value);
    else if (NEEDS_ESCAPING.test(value)) elements[index] = `"${value.replace(ESCAPED_CHARACTERS, '\\$&')}"`;
    else elements[index] = `"${value}"`;
  }
  return `{${elements.join(',')}}`;
}
