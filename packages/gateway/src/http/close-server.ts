import type { Server } from 'node:http';

/** How often a closing server ends the keep-alive connections that went idle since the last look. */
const IDLE_SWEEP_MS = 50;

/**
 * Closes an HTTP app gracefully: it takes no new connections and lets the requests in flight
 * finish. Node's close() ends only the keep-alive connections that are idle at that moment; one
 * whose request was still in flight goes idle later and would hold close() for the whole
 * keep-alive timeout (72 s by default), past the process's stop deadline. Those are ended as
 * soon as their answer has gone out.
 */
export async function closeServer(app: { server: Server; close(): Promise<unknown> }): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
  }
}
