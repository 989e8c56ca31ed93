/**
 * The lanes of a claim loop: the items of one key (a sender account, a receiver) wait for one of
 * the lane's slots, so a slow key fills only its own lane. Work started from them is tracked, so
 * that a graceful stop can wait for all of it.
 */

/** A lane's items not started yet, and how many of its slots are taken. */
export interface LaneSlots<Item> {
  readonly waiting: Item[];
  active: number;
}

/** Work started and not finished yet. */
export class InFlight {
  private readonly running = new Set<Promise<void>>();

  track(work: Promise<void>): void {
    const tracked = work.finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /** Resolves once nothing is in flight, work started meanwhile included. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}

/** Starts the lane's waiting items, oldest first, while fewer than `slots` are active. */
export function fillSlots<Item>(lane: LaneSlots<Item>, slots: number, inFlight: InFlight, start: (item: Item) => Promise<void>): void {
  while (lane.active < slots && lane.waiting.length > 0) {
    const item = lane.waiting.shift()!;
    lane.active += 1;
    inFlight.track(start(item));
  }
}
