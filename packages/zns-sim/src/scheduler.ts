/**
 * One timer for many delayed jobs (delivery events, retries): a binary min-heap keyed by due time.
 * Pushing is O(log n) and, because most jobs share one delay, rarely moves the single underlying timer.
 */
interface Job {
  due: number;
  seq: number;
  run: () => void;
}

export class Scheduler {
  private heap: Job[] = [];
  private seq = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private closed = false;

  get size(): number {
    return this.heap.length;
  }

  /** Runs `run` after `delayMs` (0 = on the next tick of the timer). */
  after(delayMs: number, run: () => void): void {
    if (this.closed) return;
    const job: Job = { due: Date.now() + Math.max(0, delayMs), seq: this.seq++, run };
    this.push(job);
    if (job.due < this.timerDue) this.arm();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.heap = [];
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerDue = Infinity;
    const head = this.heap[0];
    if (!head || this.closed) return;
    this.timerDue = head.due;
    this.timer = setTimeout(() => this.fire(), Math.max(0, head.due - Date.now()));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = null;
    this.timerDue = Infinity;
    const now = Date.now();
    let head = this.heap[0];
    let ran = 0;
    // Bounded batches keep one tick short even under a large backlog.
    while (head && head.due <= now && ran < 5000) {
      this.pop();
      ran++;
      try {
        head.run();
      } catch {
        // a job's own failure must not stop the others
      }
      if (this.closed) return;
      head = this.heap[0];
    }
    if (head && head.due <= now) {
      this.timerDue = now;
      this.timer = setTimeout(() => this.fire(), 0);
      this.timer.unref();
    } else this.arm();
  }

  private less(a: Job, b: Job): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  private push(job: Job): void {
    const h = this.heap;
    h.push(job);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = h[p] as Job;
      if (!this.less(job, parent)) break;
      h[i] = parent;
      i = p;
    }
    h[i] = job;
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop();
    if (!last || h.length === 0) return;
    let i = 0;
    const n = h.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.less(h[r] as Job, h[l] as Job)) c = r;
      const child = h[c] as Job;
      if (!this.less(child, last)) break;
      h[i] = child;
      i = c;
    }
    h[i] = last;
  }
}
