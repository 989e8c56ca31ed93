/**
 * What the store writes while a measurement runs, per message: a yardstick that does not follow
 * the machine's speed, as CPU time does. A change to what each message writes (an index, a
 * column, a status change) shows here in one run, where its CPU takes many alternating pairs.
 *
 * - SQLite: the bytes the gateway's processes made dirty in files (`write_bytes` of
 *   /proc/<pid>/io, counted a page at a time as the kernel marks it dirty): the write-ahead log's
 *   frames, the database pages its checkpoints copy, and the log's page shared by two commits,
 *   written again after the first one's fsync.
 * - PostgreSQL: the server's write-ahead log (`pg_stat_wal`, PostgreSQL 14 and later): its bytes,
 *   records and full-page images, server-wide, so only meaningful while nothing else writes to it.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';

export type StoreWriteSource = { store: 'sqlite'; gatewayPids: number[] } | { store: 'postgres'; databaseUrl: string };

export type StoreWrites =
  | { store: 'sqlite'; bytes: number }
  /** fullPageImages: pages written whole to the log (the first change of a page after a checkpoint). */
  | { store: 'postgres'; bytes: number; walRecords: number; fullPageImages: number };

/** SQLite: the gateway's own processes write the store; PostgreSQL: the server named by the URL. */
export function storeWriteSource(store: StoreWriteSource['store'], gatewayPids: number[], databaseUrl: string | undefined): StoreWriteSource {
  return store === 'sqlite' ? { store, gatewayPids } : { store, databaseUrl: databaseUrl! };
}

/** Kilobytes written per request or message; null when not measured. */
export function kilobytesPer(writes: StoreWrites | null, count: number): number | null {
  return writes === null || count === 0 ? null : writes.bytes / 1024 / count;
}

export interface StoreWriteMeter {
  /** What was written since the meter started; null where the counters could not be read. */
  stop(): Promise<StoreWrites | null>;
}

function readFileWriteBytes(pid: number): number | null {
  try {
    const match = /^write_bytes:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

function sumFileWriteBytes(pids: readonly number[]): number | null {
  let total = 0;
  for (const pid of pids) {
    const bytes = readFileWriteBytes(pid);
    if (bytes === null) return null;
    total += bytes;
  }
  return total;
}

interface WalCounters {
  bytes: number;
  records: number;
  fullPageImages: number;
}

async function readWalCounters(databaseUrl: string): Promise<WalCounters | null> {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
    const { rows } = await client.query<{ bytes: string; records: string; full_page_images: string }>(
      'SELECT wal_bytes::text AS bytes, wal_records::text AS records, wal_fpi::text AS full_page_images FROM pg_stat_wal',
    );
    const row = rows[0];
    return row ? { bytes: Number(row.bytes), records: Number(row.records), fullPageImages: Number(row.full_page_images) } : null;
  } catch {
    // A server before PostgreSQL 14 has no pg_stat_wal.
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function startStoreWriteMeter(source: StoreWriteSource): Promise<StoreWriteMeter> {
  if (source.store === 'sqlite') {
    const before = sumFileWriteBytes(source.gatewayPids);
    return {
      stop: async () => {
        const after = sumFileWriteBytes(source.gatewayPids);
        return before === null || after === null ? null : { store: 'sqlite', bytes: after - before };
      },
    };
  }
  const before = await readWalCounters(source.databaseUrl);
  return {
    stop: async () => {
      const after = await readWalCounters(source.databaseUrl);
      if (before === null || after === null) return null;
      return { store: 'postgres', bytes: after.bytes - before.bytes, walRecords: after.records - before.records, fullPageImages: after.fullPageImages - before.fullPageImages };
    },
  };
}

/** "store writes 19.3 KB/msg" (SQLite) or "WAL 9.1 KB/msg, 54 records, 0.8 full pages" (PostgreSQL). */
export function describeStoreWrites(writes: StoreWrites | null, count: number, unit: string): string {
  const kilobytes = kilobytesPer(writes, count);
  if (writes === null || kilobytes === null) return 'store writes: not readable';
  if (writes.store === 'sqlite') return `store writes ${kilobytes.toFixed(1)} KB/${unit} (SQLite files)`;
  return `WAL ${kilobytes.toFixed(1)} KB/${unit}, ${(writes.walRecords / count).toFixed(1)} records, ${(writes.fullPageImages / count).toFixed(2)} full pages (server-wide)`;
}
