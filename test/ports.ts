/**
 * Free loopback ports for the tests of every package (and the gateway's benchmarks): the one test
 * helper the packages share, kept outside them since the client's tests may import nothing from
 * the gateway's package.
 */
import { createServer } from 'node:net';

// Below Linux's ephemeral range (32768–60999): a port the kernel hands out for port 0 or for an
// outgoing connection can be taken by another test's connection between our check and the
// child's bind (a restart test failed with EADDRINUSE that way).
const FIRST_PORT = 20_000;
// Each vitest worker (VITEST_POOL_ID 1, 2, …) takes its ports from a block of its own, one after
// the other, so two tests never pick the same port at once; other callers (the benchmarks) take block 0.
const BLOCK_SIZE = 2_000;
const BLOCKS = 6;
const block = Number(process.env.VITEST_POOL_ID ?? 0) % BLOCKS;
let nextOffset = Math.floor(Math.random() * BLOCK_SIZE);

/** A loopback port below the ephemeral range that was free a moment ago. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < BLOCK_SIZE; attempt += 1) {
    const port = FIRST_PORT + block * BLOCK_SIZE + (nextOffset++ % BLOCK_SIZE);
    if (await isFree(port)) return port;
  }
  throw new Error(`no free loopback port in ${FIRST_PORT + block * BLOCK_SIZE}–${FIRST_PORT + (block + 1) * BLOCK_SIZE - 1}`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
