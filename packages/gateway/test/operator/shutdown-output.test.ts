/**
 * SIGTERM must end `tms start` whatever happens to its standard output: here its reader stops
 * reading while the gateway logs a lot (access log on), then goes away altogether. The process
 * must still exit 0 on SIGTERM and give its port back. A real `tms start` child process.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, freePort, gatewayEnvironment, type TestDatabase } from '../harness.ts';
import { childEnvironment, REPO_ROOT, TMS_BIN } from './processes.ts';

/** Generous: only a process that never exits should fail this. */
const EXIT_WAIT_MS = 45_000;

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('tms start on SIGTERM with a dead standard output', () => {
  let database: TestDatabase | undefined;
  let kill: (() => void) | undefined;

  afterEach(async () => {
    kill?.();
    await database?.drop();
  });

  it('exits 0 and frees its port after its stdout reader stalled and then closed', async () => {
    database = await createTestDatabase('sqlite');
    const port = await freePort();
    const env = gatewayEnvironment(database, {
      PORT: String(port),
      TMS_LOG_LEVEL: 'info',
      TMS_ACCESS_LOG: 'true',
      TMS_TEMPLATE_SYNC_MS: '0',
      // Nothing listens there: the workers find no platform, which is fine for this test.
      ZNS_API_URL: 'http://127.0.0.1:9',
      ZNS_OAUTH_URL: 'http://127.0.0.1:9',
    });
    const child = spawn(process.execPath, [TMS_BIN, 'start'], { cwd: REPO_ROOT, env: childEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
    kill = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));

    let stdout = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        stdout += chunk.toString('utf8');
        if (!stdout.includes('tms started')) return;
        child.stdout.off('data', onData);
        resolve();
      };
      child.stdout.on('data', onData);
      void exited.then((exit) => reject(new Error(`tms start exited before it started (${JSON.stringify(exit)}):\n${stdout}\n${stderr}`)));
    });

    // The reader stops reading; the gateway keeps answering and logging (two access log lines per request).
    child.stdout.pause();
    const url = `http://127.0.0.1:${port}/healthz`;
    let answered = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let request = 0; request < 300; request += 1) {
          const response = await fetch(url);
          await response.arrayBuffer();
          if (response.status === 200) answered += 1;
        }
      }),
    );
    expect(answered).toBe(6000);

    // Then the reader goes away, and the operator stops the service.
    child.stdout.destroy();
    child.kill('SIGTERM');
    const timer = setTimeout(kill, EXIT_WAIT_MS);
    const exit = await exited;
    clearTimeout(timer);
    expect(exit, `tms start did not exit on SIGTERM; stderr:\n${stderr}`).toEqual({ code: 0, signal: null });
    expect(await portIsFree(port)).toBe(true);
  }, 120_000);
});
