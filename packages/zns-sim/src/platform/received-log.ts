/** The received log: the newest `received_limit` send requests, with what was answered, for tests to inspect. */
import type { FaultKind } from '../faults.ts';
import type { Platform } from './platform-state.ts';

export interface ReceivedEntry {
  seq: number;
  time: number;
  path: string;
  oa_id: string | null;
  tracking_id: string | null;
  body: unknown;
  /** The JSON body the simulator answered (or would have answered, for an after-processing fault); null when the request was not processed. */
  response: unknown;
  http_status: number | null;
  fault: FaultKind | null;
}

export interface ReceivedFilter {
  tracking_id?: string;
  path?: string;
  oa_id?: string;
  since_seq?: number;
  limit?: number;
}

/** What a send request carried and was answered: either the value itself, or the JSON text of it. */
export type LoggedJson = { value: unknown } | { json: string };

/**
 * An entry as kept. A body or an answer that came or went as JSON text is kept as that one string and parsed
 * again when read: a log of the newest 100,000 sends then holds one string each instead of a tree of objects,
 * which the garbage collector would otherwise copy on every young-generation collection while it lives.
 */
class StoredEntry {
  constructor(
    readonly seq: number,
    readonly time: number,
    readonly path: string,
    readonly oaId: string | null,
    readonly trackingId: string | null,
    private readonly body: unknown,
    private readonly bodyIsJson: boolean,
    private readonly response: unknown,
    private readonly responseIsJson: boolean,
    readonly httpStatus: number | null,
    readonly fault: FaultKind | null,
  ) {}

  view(): ReceivedEntry {
    return {
      seq: this.seq,
      time: this.time,
      path: this.path,
      oa_id: this.oaId,
      tracking_id: this.trackingId,
      body: this.bodyIsJson ? JSON.parse(this.body as string) : this.body,
      response: this.responseIsJson ? JSON.parse(this.response as string) : this.response,
      http_status: this.httpStatus,
      fault: this.fault,
    };
  }
}

/** A ring buffer: once full, each new entry overwrites the oldest. */
export class ReceivedLog {
  private entries: StoredEntry[] = [];
  /** Where the next entry goes once the buffer is full (= the oldest entry). */
  private next = 0;
  private lastSeq = 0;
  private droppedCount = 0;

  constructor(private readonly limit: () => number) {}

  get size(): number {
    return this.entries.length;
  }

  /** Entries overwritten or never kept (limit 0) since the last clear. */
  get dropped(): number {
    return this.droppedCount;
  }

  add(entry: Omit<ReceivedEntry, 'seq'>): void {
    this.addLogged(entry, { value: entry.body }, { value: entry.response });
  }

  /** Like add, with the body and the answer given as values or as their JSON text. */
  addLogged(entry: Omit<ReceivedEntry, 'seq' | 'body' | 'response'>, body: LoggedJson, response: LoggedJson): void {
    const limit = this.limit();
    if (limit === 0) {
      this.droppedCount++;
      return;
    }
    const numbered = new StoredEntry(
      ++this.lastSeq,
      entry.time,
      entry.path,
      entry.oa_id,
      entry.tracking_id,
      'json' in body ? body.json : body.value,
      'json' in body,
      'json' in response ? response.json : response.value,
      'json' in response,
      entry.http_status,
      entry.fault,
    );
    if (this.entries.length < limit) this.entries.push(numbered);
    else {
      this.entries[this.next] = numbered;
      this.next = (this.next + 1) % limit;
      this.droppedCount++;
    }
  }

  /** Oldest first. */
  find(filter: ReceivedFilter = {}): ReceivedEntry[] {
    const ordered = this.entries.length < this.limit() || this.next === 0 ? this.entries : [...this.entries.slice(this.next), ...this.entries.slice(0, this.next)];
    const found: ReceivedEntry[] = [];
    const limit = filter.limit ?? Infinity;
    for (const entry of ordered) {
      if (filter.since_seq !== undefined && entry.seq <= filter.since_seq) continue;
      if (filter.tracking_id !== undefined && entry.trackingId !== filter.tracking_id) continue;
      if (filter.path !== undefined && entry.path !== filter.path) continue;
      if (filter.oa_id !== undefined && entry.oaId !== filter.oa_id) continue;
      found.push(entry.view());
      if (found.length >= limit) break;
    }
    return found;
  }

  /** Empties the log; sequence numbers go on from where they were. */
  clear(): void {
    this.entries = [];
    this.next = 0;
    this.droppedCount = 0;
  }
}

/** Empties the received log and forgets which tracking ids were seen (the duplicate counters restart). */
export function clearReceived(platform: Platform): void {
  platform.received.clear();
  platform.trackingIdCounts.clear();
  platform.counters.duplicateTrackingIds = 0;
  platform.counters.duplicateAccepts = 0;
}
