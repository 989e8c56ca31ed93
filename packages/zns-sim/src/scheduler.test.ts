import { describe, expect, it } from 'vitest';
import { Scheduler } from './scheduler.ts';

describe('Scheduler', () => {
  it('runs jobs in due order, ties in insertion order, and nothing after close', async () => {
    const s = new Scheduler();
    const order: string[] = [];
    s.after(60, () => order.push('c'));
    s.after(20, () => order.push('a1'));
    s.after(20, () => order.push('a2'));
    s.after(40, () => order.push('b'));
    s.after(0, () => order.push('now'));
    s.after(80, () => {
      throw new Error('a failing job does not stop the others');
    });
    s.after(90, () => order.push('d'));
    expect(s.size).toBe(7);
    await new Promise((r) => setTimeout(r, 150));
    expect(order).toEqual(['now', 'a1', 'a2', 'b', 'c', 'd']);
    expect(s.size).toBe(0);
    s.after(10, () => order.push('late'));
    s.close();
    s.after(10, () => order.push('after-close'));
    await new Promise((r) => setTimeout(r, 40));
    expect(order).toHaveLength(6);
  });

  it('keeps order across many jobs', async () => {
    const s = new Scheduler();
    const got: number[] = [];
    const delays = Array.from({ length: 500 }, (_, i) => (i * 7919) % 50);
    // Each job's due time as the scheduler sets it lies between the clock read before and after
    // its registration: registering 500 jobs takes a few milliseconds on a loaded machine.
    const earliestDue: number[] = [];
    const latestDue: number[] = [];
    delays.forEach((d, i) => {
      earliestDue.push(Date.now() + d);
      s.after(d, () => got.push(i));
      latestDue.push(Date.now() + d);
    });
    const deadline = Date.now() + 5000;
    while (got.length < 500 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(got).toHaveLength(500);
    for (let k = 1; k < got.length; k++) expect(latestDue[got[k] as number]).toBeGreaterThanOrEqual(earliestDue[got[k - 1] as number] as number);
    s.close();
  });
});
