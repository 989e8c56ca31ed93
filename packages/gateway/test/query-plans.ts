/**
 * A statement's query plan as the plan tests read it (test/store/*-plans.test.ts), taken inside a
 * transaction that is rolled back: SQLite's EXPLAIN QUERY PLAN lines, or every node of PostgreSQL's
 * EXPLAIN with sequential scans priced out (`enable_seqscan = off`, for that transaction only), so
 * the plan shows whether an index can serve the statement rather than what is cheapest for a small
 * table without statistics.
 */
import { CompiledQuery, sql } from 'kysely';
import type { Store } from '../src/store/database.ts';

export interface PostgresPlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PostgresPlanNode[];
}

export interface ExplainedPlan {
  /** SQLite's lines (empty on PostgreSQL). */
  sqliteLines: string[];
  /** PostgreSQL's nodes, the whole tree in order (empty on SQLite). */
  postgresNodes: PostgresPlanNode[];
  /** The plan as printed when an assertion fails. */
  text: string;
}

export async function explainStatement(store: Store, query: CompiledQuery): Promise<ExplainedPlan> {
  return store.db.connection().execute(async (db) => {
    await sql`BEGIN`.execute(db);
    try {
      if (store.dialect === 'sqlite') {
        const result = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]));
        const sqliteLines = result.rows.map((row) => row.detail);
        return { sqliteLines, postgresNodes: [], text: sqliteLines.join('\n') };
      }
      await sql`SET LOCAL enable_seqscan = off`.execute(db);
      const result = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: PostgresPlanNode }] }>(CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${query.sql}`, [...query.parameters]));
      const root = result.rows[0]!['QUERY PLAN'][0].Plan;
      const postgresNodes: PostgresPlanNode[] = [];
      const visit = (node: PostgresPlanNode) => {
        postgresNodes.push(node);
        for (const child of node.Plans ?? []) visit(child);
      };
      visit(root);
      return { sqliteLines: [], postgresNodes, text: JSON.stringify(root, null, 1) };
    } finally {
      await sql`ROLLBACK`.execute(db);
    }
  });
}
