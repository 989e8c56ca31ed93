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

/** A ring buffer: once full, each new entry overwrites the oldest. */
export class ReceivedLog {
  private entries: ReceivedEntry[] = [];
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
    const limit = this.limit();
    if (limit === 0) {
      this.droppedCount++;
      return;
    }
    const numbered: ReceivedEntry = { seq: ++this.lastSeq, ...entry };
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
      if (filter.tracking_id !== undefined && entry.tracking_id !== filter.tracking_id) continue;
      if (filter.path !== undefined && entry.path !== filter.path) continue;
      if (filter.oa_id !== undefined && entry.oa_id !== filter.oa_id) continue;
      found.push(entry);
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
