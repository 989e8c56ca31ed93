/**
 * The batch command's journal: what makes `tms-client batch FILE` resumable without sending twice.
 *
 * A write-ahead log of JSON lines beside the CSV. Before each batch request we append the exact
 * request and its Idempotency-Key (`pending`) and fsync; after the answer we append which rows were
 * accepted (`done`). A rerun skips accepted rows, and a chunk left `pending` by a crash is sent
 * again with the same key and body: the service then answers with its stored first response
 * instead of queueing (and charging) the messages again (docs/api.md, 24 hours).
 *
 * Rows are identified by content (template, phone, tracking_id, params) and occurrence, not by
 * line number, so a file edited or re-sorted between runs still maps to the same recipients.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { BatchRecipient, BatchRequest } from '../types.ts';

export interface AcceptedRow {
  row: string;
  msg_id: string;
  scheduled_at: string | null;
}

export interface PendingChunk {
  type: 'pending';
  key: string;
  /** Epoch ms when the chunk was written, to respect the service's 24-hour idempotency window. */
  at: number;
  rows: string[];
  body: BatchRequest;
}

interface DoneChunk {
  type: 'done';
  key: string;
  at: number;
  accepted: AcceptedRow[];
}

type Entry = PendingChunk | DoneChunk;

/** Stable ids for the rows of a file: the same recipient twice in a file gets `#0` and `#1`. */
export function rowKeys(templateId: string, recipients: readonly BatchRecipient[]): string[] {
  const occurrences = new Map<string, number>();
  return recipients.map((recipient) => {
    const data = Object.entries(recipient.template_data ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const digest = createHash('sha256')
      .update(JSON.stringify([templateId, recipient.phone, recipient.tracking_id ?? '', data]))
      .digest('hex')
      .slice(0, 32);
    const seen = occurrences.get(digest) ?? 0;
    occurrences.set(digest, seen + 1);
    return `${digest}#${seen}`;
  });
}

export class Journal {
  readonly accepted = new Map<string, AcceptedRow>();
  private readonly open = new Map<string, PendingChunk>();
  private fd: number | null = null;

  private constructor(readonly path: string) {}

  static load(path: string): Journal {
    const journal = new Journal(path);
    if (!existsSync(path)) return journal;
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.forEach((line, index) => {
      if (line.trim() === '') return;
      let entry: Entry;
      try {
        entry = JSON.parse(line) as Entry;
      } catch {
        // Only the last line can be torn (a crash mid-append); anything else is a damaged journal.
        if (index >= lines.length - 2) return;
        throw new Error(`${path}:${index + 1}: not a journal line; the journal is damaged (move it away to start over)`);
      }
      journal.apply(entry);
    });
    return journal;
  }

  private apply(entry: Entry): void {
    if (entry.type === 'pending') {
      this.open.set(entry.key, entry);
    } else {
      this.open.delete(entry.key);
      for (const row of entry.accepted) this.accepted.set(row.row, row);
    }
  }

  /** Chunks written but never answered: their outcome is unknown until they are sent again with their key. */
  unsettled(): PendingChunk[] {
    return [...this.open.values()];
  }

  pending(key: string, rows: string[], body: BatchRequest): void {
    this.append({ type: 'pending', key, at: Date.now(), rows, body });
  }

  done(key: string, accepted: AcceptedRow[]): void {
    this.append({ type: 'done', key, at: Date.now(), accepted });
  }

  private append(entry: Entry): void {
    this.fd ??= openSync(this.path, 'a');
    writeSync(this.fd, `${JSON.stringify(entry)}\n`);
    // Durable before the request goes out (pending) or before we report success (done).
    fsyncSync(this.fd);
    this.apply(entry);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
