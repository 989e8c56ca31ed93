/**
 * The limits of one platform call, over real HTTP against the simulator: a header value that
 * cannot be sent fails that call alone (the connection pool stays usable), every call ends by its
 * deadline, and a failed send says whether the platform may have carried it out.
 */
import { startSimulator, type RunningSimulator } from '@tms/zns-sim';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InvalidPlatformRequestError, PlatformUnavailableError, ZnsClient, type SendRequest } from '../../src/platform/zns-client.ts';
import { DEMO_SENDER_ACCOUNT } from '../../src/services/demo.ts';
import { freePort } from '../harness.ts';

const BAD_HEADER_VALUES = ['line\nbreak', 'nul\u0000byte', 'tiếng Việt', ' padded ', 'del\u007f', 'c1\u0085'];

function otp(trackingId: string): SendRequest {
  return { kind: 'plain', recipient: '84912345678', templateId: '250002', templateData: { otp: '123456' }, trackingId };
}

async function failureOf(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('the call succeeded');
}

describe('platform calls', () => {
  let simulator: RunningSimulator;
  let accessToken: string;
  const clients: ZnsClient[] = [];

  const client = (options: { timeoutMs?: number; connections?: number; url?: string; agent?: Agent } = {}): ZnsClient => {
    const url = options.url ?? simulator.url;
    const created = new ZnsClient({ oauthBaseUrl: url, apiBaseUrl: url, timeoutMs: options.timeoutMs ?? 2000, connections: options.connections }, options.agent);
    clients.push(created);
    return created;
  };

  beforeAll(async () => {
    simulator = await startSimulator({ eventsUrl: null });
    simulator.control.setRecipientRules([]);
    const refreshed = await client().refreshAccessToken({
      appId: DEMO_SENDER_ACCOUNT.app_id,
      appSecret: DEMO_SENDER_ACCOUNT.app_secret,
      refreshToken: DEMO_SENDER_ACCOUNT.refresh_token,
    });
    if (!refreshed.ok) throw new Error(`refresh failed: ${refreshed.code} ${refreshed.message}`);
    accessToken = refreshed.data.accessToken;
  });
  afterAll(async () => {
    await Promise.all(clients.map((created) => created.close().catch(() => undefined)));
    await simulator?.close();
  });
  beforeEach(() => {
    simulator.control.clearFaults();
  });

  it('refuses a header value that HTTP cannot carry, call by call, without using up the connection pool', async () => {
    const small = client({ connections: 2 });
    // Many more refused calls than the pool has connections.
    for (let round = 0; round < 4; round += 1) {
      for (const value of BAD_HEADER_VALUES) {
        const refresh = await failureOf(small.refreshAccessToken({ appId: DEMO_SENDER_ACCOUNT.app_id, appSecret: value, refreshToken: 'unused' }));
        expect(refresh).toBeInstanceOf(InvalidPlatformRequestError);
        expect(refresh).toMatchObject({ header: 'secret_key' });
        const send = await failureOf(small.sendMessage(value, otp(`bad-header-${round}`)));
        expect(send).toBeInstanceOf(InvalidPlatformRequestError);
        expect(send).toMatchObject({ header: 'access_token' });
      }
    }
    expect(simulator.control.received({ tracking_id: 'bad-header-0' })).toHaveLength(0);
    // The same client still reaches the platform.
    const sent = await small.sendMessage(accessToken, otp('after-bad-headers'));
    expect(sent.ok).toBe(true);
    expect(await small.getQuota(accessToken)).toMatchObject({ ok: true });
  });

  it('ends a call the platform never answers at its deadline, as a send whose outcome is unknown', async () => {
    simulator.control.setFaults({ timeout_rate: 1, timeout_ms: 60_000, scope: 'all' });
    const impatient = client({ timeoutMs: 300 });
    const failure = await failureOf(impatient.sendMessage(accessToken, otp('never-answered')));
    expect(failure).toBeInstanceOf(PlatformUnavailableError);
    expect(failure).toMatchObject({ unknownOutcome: 'timeout' });
    // The platform did get it: exactly why it must not be sent again blindly.
    expect(simulator.control.received({ tracking_id: 'never-answered' })).toHaveLength(1);
    const quota = await failureOf(impatient.getQuota(accessToken));
    expect(quota).toBeInstanceOf(PlatformUnavailableError);
  });

  it('gives up a call still waiting for a pooled connection at its deadline, and never sends it later', async () => {
    const pool = new Agent({ connections: 1, pipelining: 1 });
    const patient = client({ timeoutMs: 1500, agent: pool });
    const impatient = client({ timeoutMs: 200, agent: pool });
    simulator.control.setFaults({ timeout_rate: 1, timeout_ms: 60_000, scope: 'all' });
    // The only connection is taken by a send the platform does not answer.
    const holding = failureOf(patient.sendMessage(accessToken, otp('holds-the-connection')));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const queued = await failureOf(impatient.sendMessage(accessToken, otp('queued-behind')));
    expect(queued).toBeInstanceOf(PlatformUnavailableError);
    expect(queued).toMatchObject({ unknownOutcome: null });
    expect(await holding).toMatchObject({ unknownOutcome: 'timeout' });
    simulator.control.clearFaults();
    // A later call gets the connection after the queued one's turn: that one was cancelled unsent.
    expect((await patient.sendMessage(accessToken, otp('after-the-queue'))).ok).toBe(true);
    expect(simulator.control.received({ tracking_id: 'queued-behind' })).toHaveLength(0);
  });

  it('says a send certainly did not arrive when nothing listens, or when the platform answers 503', async () => {
    const nowhere = client({ url: `http://127.0.0.1:${await freePort()}` });
    const refused = await failureOf(nowhere.sendMessage(accessToken, otp('refused')));
    expect(refused).toBeInstanceOf(PlatformUnavailableError);
    expect(refused).toMatchObject({ unknownOutcome: null });
    simulator.control.setFaults({ error_rate_5xx: 1, error_status: 503, scope: 'send' });
    expect(await failureOf(client().sendMessage(accessToken, otp('answered-503')))).toMatchObject({ statusCode: 503, unknownOutcome: null });
  });

  it('says a send may have arrived when a 502 or 504 without a platform error body comes back', async () => {
    for (const status of [502, 504]) {
      simulator.control.setFaults({ error_rate_5xx: 1, error_status: status, scope: 'send', after_processing: true });
      const failure = await failureOf(client().sendMessage(accessToken, otp(`ambiguous-${status}`)));
      expect(failure).toBeInstanceOf(PlatformUnavailableError);
      expect(failure).toMatchObject({ statusCode: status, unknownOutcome: 'ambiguous_answer' });
    }
  });
});
