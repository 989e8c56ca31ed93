import { sql } from 'kysely';
import type pg from 'pg';

/**
 * PostgreSQL parses, analyses and plans an unnamed statement every time it runs. The gateway runs
 * the same few dozen statement texts over and over (Kysely builds the same SQL for the same shape,
 * and bulk inserts pass arrays, not rows), so a text seen a few times gets a name, and each
 * connection prepares it on its first run of it and afterwards only binds and executes it. The
 * statement goes out in the same round trip either way.
 */
const RUNS_BEFORE_NAMING = 3;
/** Named statements per store, so per connection: each costs the server its parse tree and plan. */
const MOST_NAMES = 256;
/** Texts counted but not yet named; the count starts over when it reaches this (bounded memory). */
const MOST_COUNTED = 1024;
/** Longer texts are never named: none of the repeated ones is near it. */
const LONGEST_NAMED_TEXT = 16_384;

const PLANNED_PER_RUN_MARK = '/* planned per run */';

/**
 * Marks a statement whose best plan depends on its values or on the size of its tables: a list,
 * whose filter may match a few rows or most of them and whose limit and offset say how far to
 * read, and a batch of rows joined to a table. It is never prepared, so PostgreSQL plans it for
 * each run's values and tables; a prepared statement settles on one generic plan after five runs.
 * Measured: the generic plan of the delivery events' update, made while the table was small, kept
 * scanning it whole (12.4 ms a run against 4.6). Goes first in raw SQL, or in a query builder's
 * `modifyFront`.
 */
export const PLANNED_PER_RUN = sql.raw(PLANNED_PER_RUN_MARK);

/** The names one store gives its statement texts (shared by the connections of its pool). */
export class StatementNames {
  private readonly runsOfText = new Map<string, number>();
  private readonly nameOfText = new Map<string, string>();
  private named = 0;

  /** The text's name, once it has been run often enough to be worth preparing. */
  nameOf(text: string): string | undefined {
    const name = this.nameOfText.get(text);
    if (name !== undefined || text.length > LONGEST_NAMED_TEXT || text.includes(PLANNED_PER_RUN_MARK)) return name;
    const runs = (this.runsOfText.get(text) ?? 0) + 1;
    if (runs < RUNS_BEFORE_NAMING || this.nameOfText.size >= MOST_NAMES) {
      if (this.runsOfText.size >= MOST_COUNTED) this.runsOfText.clear();
      this.runsOfText.set(text, runs);
      return undefined;
    }
    this.runsOfText.delete(text);
    this.named += 1;
    const fresh = `tms_${this.named}`;
    this.nameOfText.set(text, fresh);
    return fresh;
  }

  /** Gives the text a new name on its next run: its prepared plan no longer fits the schema. */
  forget(text: string): void {
    this.nameOfText.delete(text);
  }
}

/**
 * PostgreSQL refuses to run a prepared statement whose result columns changed since it was prepared
 * (a migration added a column to a table it selects whole). Nothing ran; the same statement,
 * prepared again under a new name, runs.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type');
}

type Query = (config: unknown, values?: unknown) => unknown;

/** Makes a pool's new client run the statements `names` names as prepared ones. */
export function runNamedStatements(client: pg.PoolClient, names: StatementNames): void {
  const query = client.query.bind(client) as Query;
  const namedQuery: Query = (config, values) => {
    // Kysely runs every statement as (text, values); anything else (a cursor, a config) goes as it
    // came. So does a text without values: PostgreSQL cannot prepare several commands in one text
    // (`BEGIN; SET LOCAL …`), and a statement without values takes no parameters, so it may be one.
    const name = typeof config === 'string' && Array.isArray(values) && values.length > 0 ? names.nameOf(config) : undefined;
    if (name === undefined) return query(config, values);
    const result = query({ name, text: config, values });
    if (!(result instanceof Promise)) return result;
    return result.catch((error: unknown) => {
      if (isStalePreparedStatement(error)) names.forget(config as string);
      throw error;
    });
  };
  (client as unknown as { query: Query }).query = namedQuery;
}
