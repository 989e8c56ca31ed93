import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets a heap grow past what survived its last full collection before it collects again,
 * for every thread of this process (`TMS_HEAP_GROWTH_PERCENT`; 0 leaves V8's own rule).
 *
 * V8 picks that factor from the heap's limit, and the limit from the machine's memory: on a machine
 * with many gigabytes it lets garbage build up to four times what a thread holds. The gateway holds
 * little (its code, caches and requests in flight), so its peak memory is mostly garbage not yet
 * collected. V8 reads this setting at every full collection, so setting it once the process runs
 * applies to the heaps that exist and to the threads started later.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
