interface Pending<Item, Outcome> {
  item: Item;
  weight: number;
  resolve(outcome: Outcome): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions<Item> {
  /** Most items in one group. */
  maxItems: number;
  /** Most weight (e.g. message rows) in one group; an item heavier than this goes alone. */
  maxWeight: number;
  weigh(item: Item): number;
  /**
   * Groups committing at once (default 1). A store whose commits wait on a server (PostgreSQL)
   * gains from a few: the next group prepares while the previous one commits.
   */
  maxInFlight?: number;
  /**
   * Items of one partition (e.g. one workspace, whose rows a commit locks) are never in two groups
   * committing at once, and commit in the order they were submitted: a group takes them only while
   * no other group holds their partition's turn, so they gather into the next group instead of
   * queueing on the partition's locks in many small ones, and with maxInFlight above 1 the groups
   * of other partitions commit alongside. Overlapping items (below) are the exception.
   */
  partitionOf?(item: Item): string;
  /**
   * Items exempt from their partition's turn: they join a group while another holds it, and do not
   * hold it themselves, so they may commit before items of their partition submitted earlier. For
   * items whose commit is mostly work that runs side by side with another group's (a large
   * batch's inserts), not the wait for the partition's locks.
   */
  overlaps?(item: Item): boolean;
  /**
   * At most this many groups with items of one partition in flight when an overlapping item of it
   * joins one (default: no limit), so one partition's stream of large items cannot fill every
   * place in flight and hold other partitions' items in its queue.
   */
  overlappingGroupsPerPartition?: number;
  /**
   * How long a group waits for more items after the first one arrives (default 0: only those
   * already parsed in this turn of the event loop). For work nobody waits on interactively
   * (platform events, webhook outcomes), a few milliseconds make far fewer, larger commits.
   */
  lingerMs?: number;
  /**
   * Only while busy, the wait of a group for more items: when the group before ended less than
   * `ms` ago, a new group waits up to `ms`, and goes as soon as its items weigh `untilWeight`. A
   * quiet system commits each item at once; under a steady stream of small items, each commit
   * (its fsync, its fixed writes) serves more of them, and costs less per item.
   */
  busyLinger?: { ms: number; untilWeight: number };
}

/**
 * Collects work submitted by concurrent requests and commits it in groups: one transaction (and
 * one fsync) for everything that arrived while the previous groups were committing. A quiet
 * system commits each request at once; a busy one batches.
 */
export class GroupCommitter<Item, Outcome> {
  private pending: Pending<Item, Outcome>[] = [];
  private inFlight = 0;
  /** Partitions whose turn a committing group holds, and how many such groups. */
  private readonly turnsTaken = new Map<string, number>();
  /** Partitions with any item in a committing group, and how many such groups. */
  private readonly groupsOfPartition = new Map<string, number>();
  private scheduled = false;
  /** The timer of a group that waits for more items while busy (busyLinger). */
  private busyWait: NodeJS.Timeout | null = null;
  /** What the pending items weigh. */
  private pendingWeight = 0;
  /** When the last commit ended (performance.now()). */
  private lastCommitEnded = Number.NEGATIVE_INFINITY;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly commitGroup: (items: Item[]) => Promise<Outcome[]>,
    private readonly options: GroupCommitOptions<Item>,
  ) {}

  submit(item: Item): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      const weight = this.options.weigh(item);
      this.pending.push({ item, weight, resolve, reject });
      this.pendingWeight += weight;
      this.schedulePump();
    });
  }

  private schedulePump(): void {
    const busyLinger = this.options.busyLinger;
    if (this.busyWait && busyLinger && this.pendingWeight >= busyLinger.untilWeight) {
      clearTimeout(this.busyWait);
      this.busyWait = null;
      this.scheduled = false;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.busyWait = null;
      this.pump();
    };
    const linger = this.options.lingerMs ?? 0;
    if (linger > 0) setTimeout(run, linger);
    else if (busyLinger && this.pendingWeight < busyLinger.untilWeight && performance.now() - this.lastCommitEnded < busyLinger.ms) {
      this.busyWait = setTimeout(run, busyLinger.ms);
    } else {
      // setImmediate lets every request already parsed in this turn of the event loop join the group.
      setImmediate(run);
    }
  }

  /** Resolves once everything submitted so far is committed (for graceful shutdown). */
  drain(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    // A group waiting for company goes when its wait ends (or it weighs enough), not with a commit's end.
    if (this.busyWait) return;
    const maxInFlight = this.options.maxInFlight ?? 1;
    while (this.pending.length > 0 && this.inFlight < maxInFlight) {
      const group = this.takeGroup();
      if (group.length === 0) break;
      const partitions = this.claimPartitions(group);
      this.inFlight += 1;
      void this.commit(group).finally(() => {
        this.inFlight -= 1;
        this.releasePartitions(partitions);
        this.pump();
      });
    }
    this.wakeDrainersIfIdle();
  }

  /**
   * Checked wherever the committer may have become idle: after a commit, and after a scheduled
   * pump. A commit that ends can take the items a pump was scheduled for; that pump then finds
   * nothing to do, and if it did not check, a drain() waiting since then would never end.
   */
  private wakeDrainersIfIdle(): void {
    if (this.isIdle()) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Nothing waiting, committing or scheduled. */
  private isIdle(): boolean {
    return this.pending.length === 0 && this.inFlight === 0 && !this.scheduled;
  }

  /** The next group: pending items in submission order, skipping those waiting for their partition's turn, within the limits. */
  private takeGroup(): Pending<Item, Outcome>[] {
    const { partitionOf } = this.options;
    let weight = 0;
    const taken: Pending<Item, Outcome>[] = [];
    const left: Pending<Item, Outcome>[] = [];
    for (let index = 0; index < this.pending.length; index += 1) {
      const entry = this.pending[index]!;
      if (taken.length >= this.options.maxItems) {
        left.push(...this.pending.slice(index));
        break;
      }
      if (partitionOf && !this.mayJoin(entry.item, partitionOf(entry.item))) {
        left.push(entry);
        continue;
      }
      if (taken.length > 0 && weight + entry.weight > this.options.maxWeight) {
        left.push(...this.pending.slice(index));
        break;
      }
      weight += entry.weight;
      taken.push(entry);
    }
    this.pending = left;
    this.pendingWeight -= weight;
    return taken;
  }

  private mayJoin(item: Item, partition: string): boolean {
    if (!this.options.overlaps?.(item)) return !this.turnsTaken.has(partition);
    return (this.groupsOfPartition.get(partition) ?? 0) < (this.options.overlappingGroupsPerPartition ?? Number.POSITIVE_INFINITY);
  }

  /** Counts the group in its partitions: all of them, and those whose turn it takes. */
  private claimPartitions(group: Pending<Item, Outcome>[]): { turns: string[]; present: string[] } {
    const { partitionOf } = this.options;
    if (!partitionOf) return { turns: [], present: [] };
    const turns = [...new Set(group.filter((entry) => !this.options.overlaps?.(entry.item)).map((entry) => partitionOf(entry.item)))];
    const present = [...new Set(group.map((entry) => partitionOf(entry.item)))];
    for (const partition of turns) this.turnsTaken.set(partition, (this.turnsTaken.get(partition) ?? 0) + 1);
    for (const partition of present) this.groupsOfPartition.set(partition, (this.groupsOfPartition.get(partition) ?? 0) + 1);
    return { turns, present };
  }

  private releasePartitions({ turns, present }: { turns: string[]; present: string[] }): void {
    for (const [counts, partitions] of [[this.turnsTaken, turns], [this.groupsOfPartition, present]] as const) {
      for (const partition of partitions) {
        const count = (counts.get(partition) ?? 1) - 1;
        if (count === 0) counts.delete(partition);
        else counts.set(partition, count);
      }
    }
  }

  private async commit(group: Pending<Item, Outcome>[]): Promise<void> {
    try {
      const outcomes = await this.commitGroup(group.map((entry) => entry.item));
      // Before the submitters hear of it: what they submit next finds the committer busy.
      this.lastCommitEnded = performance.now();
      group.forEach((entry, index) => entry.resolve(outcomes[index]!));
    } catch (error) {
      await this.commitOneByOne(group, error);
    }
  }

  /** A failed group is retried item by item, so one bad item cannot fail its neighbours. */
  private async commitOneByOne(group: Pending<Item, Outcome>[], groupError: unknown): Promise<void> {
    if (group.length === 1) {
      group[0]!.reject(groupError);
      return;
    }
    for (const entry of group) {
      try {
        const [outcome] = await this.commitGroup([entry.item]);
        entry.resolve(outcome!);
      } catch (error) {
        entry.reject(error);
      }
    }
  }
}
