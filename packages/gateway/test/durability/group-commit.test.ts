/**
 * GroupCommitter (src/lib/group-commit.ts): concurrent submissions share commits, each submitter
 * gets its own outcome, limits hold, a failing group is retried item by item, drain() waits.
 * The commit function is the test's own: an in-memory "table" written all-or-nothing per call,
 * which records every group it was given.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GroupCommitter, type GroupCommitOptions } from '../../src/lib/group-commit.ts';

interface Item {
  id: number;
  weight: number;
  /** The commit function refuses any group holding a poisoned item. */
  poisoned?: boolean;
}

class Ledger {
  /** Every call of the commit function, with the ids it was given. */
  readonly calls: number[][] = [];
  /** Items whose group committed, in commit order. */
  readonly committed: number[] = [];
  /** Holds every commit until release() while set. */
  private gate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;

  hold(): void {
    this.gate = new Promise((resolve) => {
      this.openGate = resolve;
    });
  }

  release(): void {
    this.openGate?.();
    this.gate = null;
  }

  readonly commit = async (items: Item[]): Promise<string[]> => {
    this.calls.push(items.map((item) => item.id));
    await new Promise((resolve) => setImmediate(resolve));
    if (this.gate) await this.gate;
    const poisoned = items.find((item) => item.poisoned);
    if (poisoned) throw new Error(`item ${poisoned.id} is poisoned`);
    // All or nothing: only a group that does not throw is written.
    for (const item of items) this.committed.push(item.id);
    return items.map((item) => `outcome-${item.id}`);
  };
}

const LOOSE: GroupCommitOptions<Item> = { maxItems: 1_000, maxWeight: 1_000_000, weigh: (item) => item.weight };

function items(count: number, weight = 1): Item[] {
  return Array.from({ length: count }, (_, index) => ({ id: index, weight }));
}

/** Lets the event loop turn a few times (no clock involved). */
async function turns(count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** A commit that holds each group until released, oldest first, and records the groups it was given. */
function heldCommits() {
  const calls: string[][] = [];
  const releases: (() => void)[] = [];
  const commit = async (group: string[]) => {
    calls.push(group);
    await new Promise<void>((resolve) => releases.push(resolve));
    return group.map((item) => `outcome-${item}`);
  };
  const releaseFirst = () => releases.shift()!();
  const releaseAll = async () => {
    while (releases.length > 0) {
      releaseFirst();
      await turns(3);
    }
  };
  return { calls, commit, releaseFirst, releaseAll };
}

/** Partitions are the first letter, either case; items named in capitals (large ones) overlap. */
const CAPITALS_OVERLAP = {
  maxItems: 100,
  maxWeight: 100,
  weigh: () => 1,
  maxInFlight: 4,
  partitionOf: (item: string) => item[0]!.toLowerCase(),
  overlaps: (item: string) => item[0] === item[0]!.toUpperCase(),
};

describe('GroupCommitter', () => {
  it('commits submissions made together in fewer groups than submissions, each exactly once', async () => {
    const ledger = new Ledger();
    const committer = new GroupCommitter(ledger.commit, LOOSE);
    const outcomes = await Promise.all(items(100).map((item) => committer.submit(item)));
    expect(outcomes).toEqual(items(100).map((item) => `outcome-${item.id}`));
    expect(ledger.calls.length).toBeLessThan(100);
    expect(ledger.calls.length).toBe(1);
    expect([...ledger.committed].sort((a, b) => a - b)).toEqual(items(100).map((item) => item.id));
  });

  it('groups what arrives while a commit is in flight, and keeps submission order', async () => {
    const ledger = new Ledger();
    const committer = new GroupCommitter(ledger.commit, LOOSE);
    ledger.hold();
    const first = committer.submit({ id: 0, weight: 1 });
    await turns(3);
    expect(ledger.calls).toEqual([[0]]);
    // These arrive one by one, in separate turns, while group [0] is still committing.
    const later: Promise<string>[] = [];
    for (let id = 1; id <= 30; id += 1) {
      later.push(committer.submit({ id, weight: 1 }));
      await turns(1);
    }
    ledger.release();
    expect(await first).toBe('outcome-0');
    expect(await Promise.all(later)).toEqual(Array.from({ length: 30 }, (_, index) => `outcome-${index + 1}`));
    expect(ledger.calls).toEqual([[0], Array.from({ length: 30 }, (_, index) => index + 1)]);
    expect(ledger.committed).toEqual(Array.from({ length: 31 }, (_, index) => index));
  });

  it('hands each submitter its own outcome when the commit answers out of step with arrival', async () => {
    const committer = new GroupCommitter<Item, string>(
      async (group) => {
        await turns(group.length % 3);
        return group.map((item) => `outcome-${item.id}`);
      },
      { ...LOOSE, maxItems: 7 },
    );
    const submitted = items(50).map(async (item) => {
      await turns(item.id % 4);
      return { id: item.id, outcome: await committer.submit(item) };
    });
    for (const { id, outcome } of await Promise.all(submitted)) expect(outcome).toBe(`outcome-${id}`);
  });

  it('never puts more than maxItems items in one group', async () => {
    const ledger = new Ledger();
    const committer = new GroupCommitter(ledger.commit, { ...LOOSE, maxItems: 10 });
    await Promise.all(items(95).map((item) => committer.submit(item)));
    expect(ledger.calls.every((group) => group.length <= 10)).toBe(true);
    expect(ledger.calls.length).toBeGreaterThanOrEqual(10);
    expect(ledger.calls.flat()).toEqual(items(95).map((item) => item.id));
  });

  it('never goes over maxWeight, except an item heavier than the limit, which goes alone', async () => {
    const ledger = new Ledger();
    const weights = [400, 300, 200, 1_500, 100, 600, 500, 1, 999, 2, 1_000, 700];
    const byId = new Map(weights.map((weight, id) => [id, weight]));
    const committer = new GroupCommitter(ledger.commit, { maxItems: 100, maxWeight: 1_000, weigh: (item: Item) => item.weight });
    const outcomes = await Promise.all(weights.map((weight, id) => committer.submit({ id, weight })));
    expect(outcomes).toEqual(weights.map((_, id) => `outcome-${id}`));
    for (const group of ledger.calls) {
      const weight = group.reduce((sum, id) => sum + byId.get(id)!, 0);
      if (group.length > 1) expect(weight).toBeLessThanOrEqual(1_000);
    }
    expect(ledger.calls).toContainEqual([3]);
    expect(ledger.calls.flat()).toEqual(weights.map((_, id) => id));
    expect(ledger.calls.length).toBeLessThan(weights.length);
  });

  it('retries a failing group item by item: the bad item fails alone, its neighbours commit once', async () => {
    const ledger = new Ledger();
    const committer = new GroupCommitter(ledger.commit, LOOSE);
    const group = items(10).map((item) => ({ ...item, poisoned: item.id === 4 }));
    const settled = await Promise.allSettled(group.map((item) => committer.submit(item)));
    settled.forEach((result, id) => {
      if (id === 4) expect(result).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: 'item 4 is poisoned' }) });
      else expect(result).toEqual({ status: 'fulfilled', value: `outcome-${id}` });
    });
    expect(ledger.calls[0]).toEqual(items(10).map((item) => item.id));
    expect(ledger.calls.slice(1)).toEqual(items(10).map((item) => [item.id]));
    expect(ledger.committed).toEqual(items(10).map((item) => item.id).filter((id) => id !== 4));
  });

  it('keeps working after a failed group: later submissions commit normally', async () => {
    const ledger = new Ledger();
    const committer = new GroupCommitter(ledger.commit, LOOSE);
    await expect(committer.submit({ id: 1, weight: 1, poisoned: true })).rejects.toThrow('item 1 is poisoned');
    expect(await Promise.all([committer.submit({ id: 2, weight: 1 }), committer.submit({ id: 3, weight: 1 })])).toEqual(['outcome-2', 'outcome-3']);
    expect(ledger.committed).toEqual([2, 3]);
  });

  it('drain() resolves only once everything submitted before it is committed', async () => {
    const ledger = new Ledger();
    const committer = new GroupCommitter(ledger.commit, { ...LOOSE, maxItems: 4 });
    ledger.hold();
    const outcomes = items(10).map((item) => committer.submit(item));
    let drained = false;
    const draining = committer.drain().then(() => {
      drained = true;
    });
    await turns(20);
    expect(drained).toBe(false);
    expect(ledger.committed).toEqual([]);
    ledger.release();
    await draining;
    expect(ledger.committed).toEqual(items(10).map((item) => item.id));
    // Every submitter has its answer by the time drain() returns.
    const answered = await Promise.race([Promise.all(outcomes).then(() => true), turns(1).then(() => false)]);
    expect(answered).toBe(true);
  });

  it('drain() resolves when a finished commit took the items a lingering group was waiting for', async () => {
    const ledger = new Ledger();
    const committer = new GroupCommitter(ledger.commit, { ...LOOSE, lingerMs: 50 });
    ledger.hold();
    const first = committer.submit({ id: 1, weight: 1 });
    // The first group is committing; the second item waits for its linger to end.
    await new Promise((resolve) => setTimeout(resolve, 80));
    const second = committer.submit({ id: 2, weight: 1 });
    // The first commit ends before the linger does and takes the second item along at once.
    ledger.release();
    await Promise.all([first, second]);
    expect(ledger.calls).toEqual([[1], [2]]);
    // Nothing is left to commit, but the lingering group's turn is still to come: drain() waits for it.
    const drained = committer.drain().then(() => 'drained');
    const outcome = await Promise.race([drained, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 500))]);
    expect(outcome).toBe('drained');
  });

  describe('busyLinger', () => {
    // Only timeouts and the clock are faked: the commits and turns() still run on setImmediate.
    const fakeClock = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    afterEach(() => {
      vi.useRealTimers();
    });

    /** Whether the submission has its outcome after a few turns, without the clock moving. */
    async function answeredNow(submitted: Promise<string>): Promise<boolean> {
      return Promise.race([submitted.then(() => true), turns(5).then(() => false)]);
    }

    it('commits a lone item at once on a quiet committer, and makes the next small items wait for company while busy', async () => {
      fakeClock();
      const ledger = new Ledger();
      const committer = new GroupCommitter(ledger.commit, { ...LOOSE, busyLinger: { ms: 3, untilWeight: 10 } });
      expect(await answeredNow(committer.submit({ id: 1, weight: 1 }))).toBe(true);
      // A commit ended just now: the next group waits up to 3 ms for more items.
      const second = committer.submit({ id: 2, weight: 1 });
      expect(await answeredNow(second)).toBe(false);
      const third = committer.submit({ id: 3, weight: 1 });
      await vi.advanceTimersByTimeAsync(3);
      expect(await Promise.all([second, third])).toEqual(['outcome-2', 'outcome-3']);
      expect(ledger.calls).toEqual([[1], [2, 3]]);
      // Quiet for longer than the wait: the next item goes at once again.
      vi.advanceTimersByTime(10);
      expect(await answeredNow(committer.submit({ id: 4, weight: 1 }))).toBe(true);
      expect(ledger.calls).toEqual([[1], [2, 3], [4]]);
    });

    it('lets a waiting group go as soon as its items weigh untilWeight, and never makes a heavy item wait', async () => {
      fakeClock();
      const ledger = new Ledger();
      const committer = new GroupCommitter(ledger.commit, { ...LOOSE, busyLinger: { ms: 3, untilWeight: 10 } });
      await committer.submit({ id: 1, weight: 1 });
      const light = committer.submit({ id: 2, weight: 4 });
      expect(await answeredNow(light)).toBe(false);
      const enough = committer.submit({ id: 3, weight: 6 });
      expect(await answeredNow(enough)).toBe(true);
      expect(await light).toBe('outcome-2');
      // Busy again, and one item is heavy enough alone.
      expect(await answeredNow(committer.submit({ id: 4, weight: 10 }))).toBe(true);
      expect(ledger.calls).toEqual([[1], [2, 3], [4]]);
      await committer.drain();
    });
  });

  it('drain() on an idle committer resolves at once', async () => {
    const committer = new GroupCommitter(new Ledger().commit, LOOSE);
    await expect(committer.drain()).resolves.toBeUndefined();
  });

  it('commits up to maxInFlight groups at once, never more, and every item still gets its outcome', async () => {
    let running = 0;
    let peak = 0;
    let groups = 0;
    const commit = async (items: number[]) => {
      running += 1;
      groups += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running -= 1;
      return items.map((item) => item * 2);
    };
    const committer = new GroupCommitter(commit, { maxItems: 5, maxWeight: 100, weigh: () => 1, maxInFlight: 3 });
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_unused, index) => committer.submit(index)));
    expect(outcomes).toEqual(Array.from({ length: 40 }, (_unused, index) => index * 2));
    expect(peak).toBe(3);
    expect(groups).toBeLessThan(40);
    await committer.drain();
    expect(running).toBe(0);
  });
  it('never commits two groups of one partition at once: its items wait, in order, while other partitions commit alongside', async () => {
    const calls: string[][] = [];
    const running = new Map<string, number>();
    let overlapped = false;
    const releases: (() => void)[] = [];
    const commit = async (group: string[]) => {
      calls.push(group);
      const partitions = new Set(group.map((item) => item[0]!));
      for (const partition of partitions) {
        if (running.get(partition)) overlapped = true;
        running.set(partition, (running.get(partition) ?? 0) + 1);
      }
      await new Promise<void>((resolve) => releases.push(resolve));
      for (const partition of partitions) running.set(partition, running.get(partition)! - 1);
      return group.map((item) => `outcome-${item}`);
    };
    const committer = new GroupCommitter(commit, { maxItems: 100, maxWeight: 100, weigh: () => 1, maxInFlight: 4, partitionOf: (item: string) => item[0]! });
    const first = committer.submit('a0');
    await turns(3);
    expect(calls).toEqual([['a0']]);
    // While a's group commits, b and c go in a group of their own; a's next items wait for it.
    const later = ['a1', 'b2', 'a3', 'c4'].map((item) => committer.submit(item));
    await turns(3);
    expect(calls).toEqual([['a0'], ['b2', 'c4']]);
    releases.shift()!();
    expect(await first).toBe('outcome-a0');
    await turns(3);
    expect(calls).toEqual([['a0'], ['b2', 'c4'], ['a1', 'a3']]);
    while (releases.length > 0) {
      releases.shift()!();
      await turns(3);
    }
    expect(await Promise.all(later)).toEqual(['outcome-a1', 'outcome-b2', 'outcome-a3', 'outcome-c4']);
    expect(overlapped).toBe(false);
    await committer.drain();
  });

  it("commits items that overlap while their partition has a group in flight, without holding back the partition's other items", async () => {
    const { calls, commit, releaseFirst, releaseAll } = heldCommits();
    const committer = new GroupCommitter(commit, CAPITALS_OVERLAP);
    const first = committer.submit('a0');
    await turns(3);
    // a's small items wait for a0's group; its large ones go at once, each in the next group.
    const second = ['a1', 'A2', 'A3'].map((item) => committer.submit(item));
    await turns(3);
    expect(calls).toEqual([['a0'], ['A2', 'A3']]);
    // A large group in flight does not hold back a's small items once a0's group is done.
    releaseFirst();
    expect(await first).toBe('outcome-a0');
    await turns(3);
    expect(calls).toEqual([['a0'], ['A2', 'A3'], ['a1']]);
    await releaseAll();
    expect(await Promise.all(second)).toEqual(['outcome-a1', 'outcome-A2', 'outcome-A3']);
    await committer.drain();
  });

  it("holds an overlapping item back while its partition has the most groups in flight, without holding back other partitions", async () => {
    const { calls, commit, releaseFirst, releaseAll } = heldCommits();
    const committer = new GroupCommitter(commit, { ...CAPITALS_OVERLAP, overlappingGroupsPerPartition: 2 });
    const submitted: Promise<string>[] = [];
    for (const item of ['A1', 'A2', 'A3', 'b1']) {
      submitted.push(committer.submit(item));
      await turns(3);
    }
    // Two groups of a in flight: A3 waits, b1 does not.
    expect(calls).toEqual([['A1'], ['A2'], ['b1']]);
    releaseFirst();
    await turns(3);
    expect(calls).toEqual([['A1'], ['A2'], ['b1'], ['A3']]);
    await releaseAll();
    expect(await Promise.all(submitted)).toEqual(['outcome-A1', 'outcome-A2', 'outcome-A3', 'outcome-b1']);
    await committer.drain();
  });
});
