/**
 * Run by heap-growth.test.ts in a process of its own: a workload shaped like a busy gateway (a set
 * of long-lived objects, and a window of requests in flight whose objects outlive a young-generation
 * collection, then die), with the gateway's heap growth setting given as the first argument.
 * Prints the peak size of V8's old space, in MB.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { limitHeapGrowth } from '../../src/main/heap-growth.ts';

const ROUNDS = 2500;
const IN_FLIGHT = 150;
const OBJECTS_PER_ROUND = 2000;

limitHeapGrowth(Number(process.argv[2]));

const oldSpaceBytes = (): number => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')?.space_size ?? 0;
const held = Array.from({ length: 100_000 }, (_, index) => ({ index, name: `item ${index}` }));
const inFlight: Array<Array<{ index: number; name: string }>> = [];
let peakBytes = oldSpaceBytes();
for (let round = 0; round < ROUNDS; round += 1) {
  inFlight.push(Array.from({ length: OBJECTS_PER_ROUND }, (_, index) => ({ index, name: `request ${round}.${index}` })));
  if (inFlight.length > IN_FLIGHT) inFlight.shift();
  peakBytes = Math.max(peakBytes, oldSpaceBytes());
}
process.stdout.write(`${JSON.stringify({ peakOldSpaceMb: peakBytes / 2 ** 20, held: held.length })}\n`);
