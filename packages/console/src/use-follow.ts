/** Reads a resource again every interval while `active` holds (a message on its way, a report being retried). */
import { useEffect } from 'react';

export const FOLLOW_INTERVAL_MS = 1500;
/** Gives up after this many reads, so a page left open does not poll for ever. */
const MAX_READS = 80;

export function useFollow(active: boolean, reload: () => void, intervalMs: number = FOLLOW_INTERVAL_MS): void {
  useEffect(() => {
    if (!active) return;
    let reads = 0;
    const timer = window.setInterval(() => {
      reads += 1;
      if (reads > MAX_READS) window.clearInterval(timer);
      else reload();
    }, intervalMs);
    return () => window.clearInterval(timer);
  }, [active, reload, intervalMs]);
}
