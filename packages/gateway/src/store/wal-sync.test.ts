import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WalSync, type WalSyncOptions } from './wal-sync.ts';

const PENDING = Symbol('pending');

/** What `promise` holds now: its value if already settled, PENDING if not. */
function settledYet(promise: Promise<void>): Promise<void | typeof PENDING> {
  return Promise.race([promise, Promise.resolve(PENDING)]);
}

/** A clock that reads the given times in turn, then stays at the last. */
function clockReading(...times: number[]): () => number {
  let last = 0;
  return () => (last = times.shift() ?? last);
}

describe('WalSync', () => {
  const directories: string[] = [];
  afterEach(() => {
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  function walSyncOverAFile(options?: WalSyncOptions): WalSync {
    const directory = mkdtempSync(join(tmpdir(), 'tms-wal-sync-'));
    directories.push(directory);
    writeFileSync(join(directory, 'store.db-wal'), 'frames');
    return new WalSync(join(directory, 'store.db'), options);
  }

  /** A WalSync whose first fsync took 200 ms (average 20 ms); after it, the clock reads `now.at`. */
  async function walSyncAfterOneSlowFsync(): Promise<{ walSync: WalSync; now: { at: number } }> {
    const now = { at: 0 };
    const firstFsync = [0, 200];
    const walSync = walSyncOverAFile({ clock: () => firstFsync.shift() ?? now.at });
    await walSync.sync();
    return { walSync, now };
  }

  it('syncs on the calling thread while the disk answers fast: sync() returns its promise settled', async () => {
    const walSync = walSyncOverAFile({ clock: clockReading(0, 0.3, 1, 1.2) });
    expect(await settledYet(walSync.sync())).toBeUndefined();
    expect(await settledYet(walSync.sync())).toBeUndefined();
    walSync.close();
  });

  it('stays on the calling thread through one slow fsync among fast ones', async () => {
    // 0.2 ms, then 20 ms: the average (2.02 ms) is within the 4 ms limit.
    const walSync = walSyncOverAFile({ clock: clockReading(0, 0.2, 1, 21, 22, 22.1) });
    await walSync.sync();
    await walSync.sync();
    expect(await settledYet(walSync.sync())).toBeUndefined();
    walSync.close();
  });

  it('on a slow disk, syncs on the thread pool, timing one fsync on the calling thread each second', async () => {
    // The first fsync takes 100 ms (average 10 ms); calls come 10 ms after it, then at 1,101 ms (a
    // probe, which takes no time: average 5 ms), then at 1,102 ms.
    const walSync = walSyncOverAFile({ clock: clockReading(0, 100, 110, 110, 1101, 1101, 1101, 1102) });
    await walSync.sync();
    const onPool = walSync.sync();
    const shared = walSync.sync();
    expect(await settledYet(onPool)).toBe(PENDING);
    expect(shared).not.toBe(onPool);
    expect(walSync.sync()).toBe(shared);
    await Promise.all([onPool, shared]);
    expect(await settledYet(walSync.sync())).toBeUndefined();
    const afterProbe = walSync.sync();
    expect(await settledYet(afterProbe)).toBe(PENDING);
    await afterProbe;
    walSync.close();
  });

  it('does not sync on the calling thread while an fsync on the thread pool is in flight', async () => {
    // Slow first fsync; the next call goes to the pool; a call after the probe time, while that
    // fsync still runs, waits for the pool's next one instead.
    const walSync = walSyncOverAFile({ clock: clockReading(0, 100, 110, 5000) });
    await walSync.sync();
    const onPool = walSync.sync();
    const whileInFlight = walSync.sync();
    expect(whileInFlight).not.toBe(onPool);
    expect(await settledYet(whileInFlight)).toBe(PENDING);
    await Promise.all([onPool, whileInFlight]);
    walSync.close();
  });

  it('comes back to the calling thread once the probes bring the average within the limit', async () => {
    // A probe each second that takes no time halves the average; the third brings it to 2.5 ms.
    const { walSync, now } = await walSyncAfterOneSlowFsync();
    for (let probe = 1; probe <= 2; probe += 1) {
      now.at = 200 + probe * 1000;
      expect(await settledYet(walSync.sync())).toBeUndefined();
      const onPool = walSync.sync();
      expect(await settledYet(onPool)).toBe(PENDING);
      await onPool;
    }
    now.at = 200 + 3 * 1000;
    expect(await settledYet(walSync.sync())).toBeUndefined();
    expect(await settledYet(walSync.sync())).toBeUndefined();
    walSync.close();
  });

  it('under steady writes, with a pool fsync always in flight, still probes: once that fsync has ended', async () => {
    const { walSync, now } = await walSyncAfterOneSlowFsync();
    for (let probe = 1; probe <= 3; probe += 1) {
      // A pool fsync starts just before the probe falls due; the caller after it waits for the next.
      now.at = 200 + probe * 1000 - 1;
      const inFlight = walSync.sync();
      now.at += 1;
      const probing = walSync.sync();
      expect(await settledYet(probing)).toBe(PENDING);
      await Promise.all([inFlight, probing]);
    }
    expect(await settledYet(walSync.sync())).toBeUndefined();
    walSync.close();
  });

  it('shares one pending fsync on the thread pool between everyone who waits for it', () => {
    const walSync = walSyncOverAFile({ mode: 'thread-pool' });
    const running = walSync.sync();
    const next = walSync.sync();
    expect(walSync.sync()).toBe(next);
    expect(next).not.toBe(running);
    return Promise.all([running, next]).finally(() => walSync.close());
  });

  it('starts a new fsync on the thread pool for a caller who arrives after the last one ended', async () => {
    const walSync = walSyncOverAFile({ mode: 'thread-pool' });
    const earlier = walSync.sync();
    await earlier;
    const later = walSync.sync();
    expect(later).not.toBe(earlier);
    await later;
    walSync.close();
  });

  it.each([
    ['on the calling thread', {}],
    ['on the thread pool', { mode: 'thread-pool' as const }],
  ])('fails the waiting writers when the log cannot be synced %s', async (_where, options: WalSyncOptions) => {
    const directory = mkdtempSync(join(tmpdir(), 'tms-wal-sync-'));
    directories.push(directory);
    const walSync = new WalSync(join(directory, 'missing.db'), options);
    await expect(walSync.sync()).rejects.toThrow(/ENOENT/);
  });
});
