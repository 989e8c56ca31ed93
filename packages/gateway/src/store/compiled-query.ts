import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import type { Database } from './schema.ts';

interface Compiled<Row> {
  query: CompiledQuery<Row>;
  /** For each parameter of the compiled SQL: the index of the caller's value, or -1 for a constant. */
  slotOfParameter: number[];
}

/**
 * A query whose SQL depends on the store's dialect and never on its values: Kysely builds and
 * compiles it once per dialect, and each run only puts in its values. Building costs more than
 * running a small statement on SQLite, and the hot paths (one lookup per platform event, one charge
 * per acceptance group) run the same shapes thousands of times a second.
 *
 * `build` receives one placeholder per value, to use wherever the value goes. A placeholder is a
 * marker string typed as the value it stands for: it only ever reaches Kysely's compiler.
 */
export function compiledOnce<Values extends unknown[], Row>(
  build: (db: Kysely<Database>, ...placeholders: Values) => Compilable<Row>,
  valueCount: number,
): (db: Kysely<Database>, ...values: Values) => Promise<Row[]> {
  const byDialect = new Map<unknown, Compiled<Row>>();
  const placeholders = Array.from({ length: valueCount }, (_, index) => `\u0000placeholder ${index}\u0000`);
  return async (db, ...values) => {
    // A transaction's Kysely shares its store's adapter, so it finds the same entry.
    const dialect = db.getExecutor().adapter.constructor;
    let compiled = byDialect.get(dialect);
    if (!compiled) {
      const query = build(db, ...(placeholders as unknown as Values)).compile();
      compiled = { query, slotOfParameter: query.parameters.map((parameter) => placeholders.indexOf(parameter as string)) };
      byDialect.set(dialect, compiled);
    }
    const { query, slotOfParameter } = compiled;
    const parameters = slotOfParameter.map((slot, index) => (slot === -1 ? query.parameters[index] : values[slot]));
    const result = await db.executeQuery<Row>({ ...query, parameters });
    return result.rows;
  };
}
