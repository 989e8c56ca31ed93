import { TtlCache } from '../lib/ttl-cache.ts';
import { countMessagesInWindows, type CountWindow } from '../store/console-overview.ts';
import type { Store } from '../store/database.ts';

/**
 * Each count is a range of an index, but it still visits every entry of its range: a week of a
 * busy workspace (hundreds of thousands of messages) takes PostgreSQL near 100 ms. Two things keep
 * the console's overview well under that:
 * - a window that ended more than a day ago hardly moves any more (its messages have reached
 *   their outcome), so its count is kept for SETTLED_REUSE_MS; only today and yesterday are
 *   counted afresh;
 * - beyond RECENT_REUSE_ABOVE_MESSAGES, the fresh counts too are kept for RECENT_REUSE_MS: a busy
 *   dashboard a few seconds behind is fine, while a small workspace, where counting is cheap,
 *   always sees the figures of the moment.
 */
const SETTLED_AFTER_MS = 24 * 60 * 60_000;
const SETTLED_REUSE_MS = 10 * 60_000;
const RECENT_REUSE_ABOVE_MESSAGES = 50_000;
const RECENT_REUSE_MS = 10_000;

/** The console overview's message counts per workspace and window. */
export class MessageCounts {
  private readonly settled: TtlCache<number>;
  private readonly recent: TtlCache<number>;
  /** Concurrent overviews of one workspace share one count instead of each running it. */
  private readonly counting = new Map<string, Promise<number[]>>();

  constructor(
    private readonly store: Store,
    private readonly clock: () => number,
  ) {
    this.settled = new TtlCache(SETTLED_REUSE_MS, 10_000, clock);
    this.recent = new TtlCache(RECENT_REUSE_MS, 10_000, clock);
  }

  async count(workspaceId: string, windows: readonly CountWindow[]): Promise<number[]> {
    const keys = windows.map((window) => `${workspaceId}/${window.status}:${window.from}:${window.to}`);
    const counts = keys.map((key) => this.settled.get(key) ?? this.recent.get(key));
    const missing = counts.flatMap((count, index) => (count === undefined ? [index] : []));
    if (missing.length > 0) {
      const fresh = await this.countShared(workspaceId, missing.map((index) => windows[index]!));
      const settledBefore = this.clock() - SETTLED_AFTER_MS;
      const recentTotal = fresh.reduce((total, count, position) => (windows[missing[position]!]!.to > settledBefore ? total + count : total), 0);
      missing.forEach((index, position) => {
        const count = fresh[position]!;
        counts[index] = count;
        if (windows[index]!.to <= settledBefore) this.settled.set(keys[index]!, count);
        else if (recentTotal > RECENT_REUSE_ABOVE_MESSAGES) this.recent.set(keys[index]!, count);
      });
    }
    return counts.map((count) => count ?? 0);
  }

  private async countShared(workspaceId: string, windows: readonly CountWindow[]): Promise<number[]> {
    const key = `${workspaceId}/${windows.map((window) => `${window.status}:${window.from}:${window.to}`).join(',')}`;
    const running = this.counting.get(key);
    if (running) return running;
    const counted = countMessagesInWindows(this.store.db, workspaceId, windows).finally(() => this.counting.delete(key));
    this.counting.set(key, counted);
    return counted;
  }
}
