import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WalSync } from './wal-sync.ts';

describe('WalSync', () => {
  const directories: string[] = [];
  afterEach(() => {
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  function walSyncOverAFile(): WalSync {
    const directory = mkdtempSync(join(tmpdir(), 'tms-wal-sync-'));
    directories.push(directory);
    writeFileSync(join(directory, 'store.db-wal'), 'frames');
    return new WalSync(join(directory, 'store.db'));
  }

  it('shares one pending fsync between everyone who waits for it', () => {
    const walSync = walSyncOverAFile();
    const running = walSync.sync();
    const next = walSync.sync();
    expect(walSync.sync()).toBe(next);
    expect(next).not.toBe(running);
    return Promise.all([running, next]).finally(() => walSync.close());
  });

  it('starts a new fsync for a caller who arrives after the last one ended', async () => {
    const walSync = walSyncOverAFile();
    const earlier = walSync.sync();
    await earlier;
    const later = walSync.sync();
    expect(later).not.toBe(earlier);
    await later;
    walSync.close();
  });

  it('fails the waiting writers when the log cannot be synced', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'tms-wal-sync-'));
    directories.push(directory);
    const walSync = new WalSync(join(directory, 'missing.db'));
    await expect(walSync.sync()).rejects.toThrow(/ENOENT/);
  });
});
