interface Pending<Item, Outcome> {
  item: Item;
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
   * How long a group waits for more items after the first one arrives (default 0: only those
   * already parsed in this turn of the event loop). For work nobody waits on interactively
   * (platform events, webhook outcomes), a few milliseconds make far fewer, larger commits.
   */
  lingerMs?: number;
}

/**
 * Collects work submitted by concurrent requests and commits it in groups: one transaction (and
 * one fsync) for everything that arrived while the previous groups were committing. A quiet
 * system commits each request at once; a busy one batches.
 */
export class GroupCommitter<Item, Outcome> {
  private pending: Pending<Item, Outcome>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly commitGroup: (items: Item[]) => Promise<Outcome[]>,
    private readonly options: GroupCommitOptions<Item>,
  ) {}

  submit(item: Item): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      // setImmediate lets every request already parsed in this turn of the event loop join the group.
      if (!this.scheduled) {
        this.scheduled = true;
        const run = () => {
          this.scheduled = false;
          this.pump();
        };
        const linger = this.options.lingerMs ?? 0;
        if (linger > 0) setTimeout(run, linger);
        else setImmediate(run);
      }
    });
  }

  /** Resolves once everything submitted so far is committed (for graceful shutdown). */
  drain(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    const maxInFlight = this.options.maxInFlight ?? 1;
    while (this.pending.length > 0 && this.inFlight < maxInFlight) {
      const group = this.takeGroup();
      this.inFlight += 1;
      void this.commit(group).finally(() => {
        this.inFlight -= 1;
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

  /** The next group: the oldest pending items, within the limits. */
  private takeGroup(): Pending<Item, Outcome>[] {
    let weight = 0;
    let count = 0;
    while (count < this.pending.length && count < this.options.maxItems) {
      const next = this.options.weigh(this.pending[count]!.item);
      if (count > 0 && weight + next > this.options.maxWeight) break;
      weight += next;
      count += 1;
    }
    return this.pending.splice(0, count);
  }

  private async commit(group: Pending<Item, Outcome>[]): Promise<void> {
    try {
      const outcomes = await this.commitGroup(group.map((entry) => entry.item));
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
