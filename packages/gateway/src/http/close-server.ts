import type { Server } from 'node:http';

/**
 * Closes an HTTP app gracefully: it takes no new connections and lets the requests in flight
 * finish. Node's close() ends only the keep-alive connections that are idle at that moment; one
 * whose answer was still going out goes idle later and would hold close() for the whole
 * keep-alive timeout (72 s by default), past the process's stop deadline. So the timeout drops to
 * a millisecond: Node starts it only once an answer has been written out in full, so a slow
 * reader still gets every byte, and the connection ends right after.
 */
export async function closeServer(app: { server: Server; close(): Promise<unknown> }): Promise<void> {
  app.server.keepAliveTimeout = 1;
  await app.close();
}
