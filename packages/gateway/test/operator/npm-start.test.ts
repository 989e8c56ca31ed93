/**
 * `npm start` as the README's quick start runs it: the gateway and the ZNS simulator as separate
 * processes, so the demo's printed send ends in `delivered`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { httpRequest } from '../harness.ts';
import { REPO_ROOT, freePort, killAllTms, startTms } from './processes.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tms-npm-start-'));
afterAll(async () => {
  await killAllTms();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start', () => {
  it(
    'runs the gateway with the simulator, and the demo send ends in delivered',
    async () => {
      const [port, simulatorPort] = [await freePort(), await freePort()];
      const service = startTms([], { TMS_DATA_DIR: dataDir, PORT: String(port), TMS_SIMULATOR_PORT: String(simulatorPort) }, join(REPO_ROOT, 'scripts/start.js'));
      try {
        await service.waitForOutput('"msg":"tms started"');
        expect(service.stdout()).toContain(`ZNS simulator (demo seed) on http://127.0.0.1:${simulatorPort}`);
        const apiKey = /export TMS_API_KEY=(\S+)/.exec(service.stdout())![1]!;
        const url = `http://127.0.0.1:${port}`;
        const sent = await httpRequest(url, 'POST', '/api/v1/messages/send', {
          key: apiKey,
          body: { template_id: '250002', phone: '0912345678', template_data: { otp: '123456' } },
        });
        expect(sent.status).toBe(202);
        const deadline = Date.now() + 30_000;
        let record = (await httpRequest(url, 'GET', `/api/v1/messages/${sent.body.msg_id}`, { key: apiKey })).body;
        while (record.status !== 'delivered' && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          record = (await httpRequest(url, 'GET', `/api/v1/messages/${sent.body.msg_id}`, { key: apiKey })).body;
        }
        expect(record).toMatchObject({ status: 'delivered', provider_msg_id: expect.any(String), delivered_at: expect.any(String) });
        expect(await service.stop('SIGTERM')).toMatchObject({ code: 0 });
      } finally {
        await service.stop('SIGKILL');
      }
    },
    120_000,
  );
});
