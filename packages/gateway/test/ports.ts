import { createServer } from 'node:net';

// Below Linux's ephemeral range (32768–60999): a port the kernel hands out for port 0 or for an
// outgoing connection can be taken again by another test's connection between our check and the
// child's bind, which made a restart test fail with EADDRINUSE.
const FIRST_PORT = 20_000;
const PORT_COUNT = 12_000;
const ATTEMPTS = 50;

/** A loopback port outside the ephemeral range that was free a moment ago. No side effects on import. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = FIRST_PORT + Math.floor(Math.random() * PORT_COUNT);
    if (await isFree(port)) return port;
  }
  throw new Error(`no free loopback port in ${FIRST_PORT}–${FIRST_PORT + PORT_COUNT - 1} after ${ATTEMPTS} attempts`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
