/** POST /api/v1/messages/rsa: docs/api.md (RSA). */
import type { ErrorType } from '../../src/services/errors.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';
import { DAY_MS, expectError, expectStatus, listAll, rsaCiphertext, walletOf } from './helpers.ts';

describe.each(STORE_KINDS)('POST /api/v1/messages/rsa (%s)', (kind) => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
  });
  afterAll(async () => gateway?.close());

  const rsa = (ws: SeededWorkspace, body: Record<string, unknown>) =>
    gateway.request('POST', '/api/v1/messages/rsa', { key: ws.apiKey, body: { template_id: ws.templateId, ...body } });

  it('queues valid ciphertexts; results carry no phone; records have phone and carrier null', async () => {
    const ws = await seedWorkspace(gateway, { balance: 10_000, price: 300 });
    const ciphertexts = [rsaCiphertext(256), rsaCiphertext(128), rsaCiphertext(512)];
    const response = await rsa(ws, {
      recipients: [
        { rsa_phone: ciphertexts[0], template_data: VALID_DATA, tracking_id: 'rsa-1' },
        { rsa_phone: ciphertexts[1], template_data: VALID_DATA },
        { rsa_phone: ciphertexts[2], template_data: VALID_DATA, tracking_id: 'rsa-3' },
      ],
    });
    expectStatus(response, 202);
    expect(response.body).toEqual({
      accepted: 3,
      total: 3,
      scheduled_at: null,
      results: [
        { msg_id: expect.stringMatching(/^msg_/), tracking_id: 'rsa-1', status: 'queued' },
        { msg_id: expect.stringMatching(/^msg_/), tracking_id: expect.any(String), status: 'queued' },
        { msg_id: expect.stringMatching(/^msg_/), tracking_id: 'rsa-3', status: 'queued' },
      ],
    });
    expect(response.body.results[1].tracking_id).toBe(response.body.results[1].msg_id);
    expect(response.text).not.toContain('"phone"');
    for (const result of response.body.results) {
      const record = await gateway.request('GET', `/api/v1/messages/${result.msg_id}`, { key: ws.apiKey });
      expectStatus(record, 200);
      expect(record.body).toMatchObject({ msg_id: result.msg_id, tracking_id: result.tracking_id, status: 'queued', phone: null, carrier: null, source: 'api', template_id: ws.templateId, oa_id: ws.oaId });
      // The ciphertext never leaves the service again.
      expect(JSON.stringify(record.body)).not.toContain(ciphertexts[0]!.slice(0, 40));
    }
    const wallet = await walletOf(gateway, ws.workspaceId);
    expect(wallet.balance).toBe(10_000 - 900);
    expect(wallet.ledger[0]).toMatchObject({ kind: 'charge', amount: -900, message_count: 3 });
  });

  it('rejects malformed ciphertexts per recipient with rsa_phone_invalid and charges only the rest', async () => {
    const ws = await seedWorkspace(gateway, { balance: 10_000, price: 300 });
    const response = await rsa(ws, {
      recipients: [
        { rsa_phone: 'not base64 at all!!', template_data: VALID_DATA, tracking_id: 'bad-b64' },
        { rsa_phone: rsaCiphertext(100), template_data: VALID_DATA, tracking_id: 'bad-len' },
        { rsa_phone: rsaCiphertext(256), template_data: VALID_DATA, tracking_id: 'good' },
        { rsa_phone: rsaCiphertext(256).replace(/=*$/, '').slice(0, -1), template_data: VALID_DATA },
        { rsa_phone: rsaCiphertext(256).replaceAll('+', '-').replaceAll('/', '_').replace(/^./, '-'), template_data: VALID_DATA },
        { rsa_phone: '', template_data: VALID_DATA },
        { template_data: VALID_DATA, tracking_id: 'absent' },
        { rsa_phone: rsaCiphertext(256), template_data: { name: 'A' }, tracking_id: 'bad-data' },
      ],
    });
    expectStatus(response, 202);
    expect(response.body.accepted).toBe(1);
    expect(response.body.total).toBe(8);
    const results = response.body.results;
    expect(results[0]).toEqual({ tracking_id: 'bad-b64', status: 'error', error: expect.stringMatching(/^rsa_phone_invalid: \S/) });
    expect(results[1]).toEqual({ tracking_id: 'bad-len', status: 'error', error: expect.stringMatching(/^rsa_phone_invalid: \S/) });
    expect(results[2]).toEqual({ msg_id: expect.any(String), tracking_id: 'good', status: 'queued' });
    for (const index of [3, 4, 5]) expect(results[index]).toEqual({ status: 'error', error: expect.stringMatching(/^rsa_phone_invalid: /) });
    expect(results[6]).toEqual({ tracking_id: 'absent', status: 'error', error: expect.stringMatching(/^rsa_phone_invalid: /) });
    expect(results[7]).toEqual({ tracking_id: 'bad-data', status: 'error', error: expect.stringMatching(/^invalid_template_data: /) });
    expect(response.text).not.toContain('"phone"');
    expect((await listAll(gateway, ws)).map((message) => message.msg_id)).toEqual([results[2].msg_id]);
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(10_000 - 300);
  });

  it('applies the daily quota like batch', async () => {
    const ws = await seedWorkspace(gateway, { dailyQuota: 2 });
    const response = await rsa(ws, { recipients: [1, 2, 3].map(() => ({ rsa_phone: rsaCiphertext(), template_data: VALID_DATA })) });
    expectStatus(response, 202);
    expect(response.body.accepted).toBe(2);
    expect(response.body.results[2]).toEqual({ status: 'error', error: expect.stringMatching(/^daily_quota_exceeded: /) });
    const quota = await gateway.request('GET', '/api/v1/quota', { key: ws.apiKey });
    expect(quota.body.quotas[0]).toMatchObject({ used: 2, remaining: 0 });
  });

  it('schedules at send_at', async () => {
    const ws = await seedWorkspace(gateway);
    const sendAt = new Date(Math.floor((Date.now() + DAY_MS) / 1000) * 1000).toISOString();
    const response = await rsa(ws, { recipients: [{ rsa_phone: rsaCiphertext(), template_data: VALID_DATA }], send_at: sendAt });
    expectStatus(response, 202);
    expect(response.body.scheduled_at).toBe(sendAt);
  });

  it('is 402 when the wallet cannot pay for all, and queues nothing', async () => {
    const ws = await seedWorkspace(gateway, { balance: 500, price: 300 });
    expectError(await rsa(ws, { recipients: [1, 2].map(() => ({ rsa_phone: rsaCiphertext(), template_data: VALID_DATA })) }), 'insufficient_balance');
    expect(await listAll(gateway, ws)).toEqual([]);
    expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(500);
  });

  describe('malformed requests are 400 and queue nothing', () => {
    let ws: SeededWorkspace;
    beforeAll(async () => {
      ws = await seedWorkspace(gateway);
    });
    const one = () => ({ rsa_phone: rsaCiphertext(), template_data: VALID_DATA });
    const cases: [string, () => Record<string, unknown>, ErrorType][] = [
      ['0 recipients', () => ({ recipients: [] }), 'invalid_request'],
      ['501 recipients', () => ({ recipients: Array.from({ length: 501 }, one) }), 'invalid_request'],
      ['an invalid tracking_id', () => ({ recipients: [one(), { ...one(), tracking_id: 'no spaces please' }] }), 'invalid_tracking_id'],
      ['a phone field (RSA takes rsa_phone only)', () => ({ recipients: [{ ...one(), phone: '0912345678' }] }), 'invalid_request'],
      ['a mode field', () => ({ recipients: [one()], mode: 'plain' }), 'invalid_request'],
      ['rsa_phone not a string', () => ({ recipients: [{ rsa_phone: 123, template_data: VALID_DATA }] }), 'invalid_request'],
      ['send_at more than 60 days ahead', () => ({ recipients: [one()], send_at: new Date(Date.now() + 61 * DAY_MS).toISOString() }), 'invalid_send_at'],
    ];
    it.each(cases)('%s is %s', async (_label, body, type) => {
      expectError(await rsa(ws, body()), type);
      expect(await listAll(gateway, ws)).toEqual([]);
      expect((await walletOf(gateway, ws.workspaceId)).balance).toBe(1_000_000);
    });
  });

  it('takes 500 recipients', async () => {
    const ws = await seedWorkspace(gateway, { price: 10 });
    const response = await rsa(ws, { recipients: Array.from({ length: 500 }, () => ({ rsa_phone: rsaCiphertext(), template_data: VALID_DATA })) });
    expectStatus(response, 202);
    expect(response.body).toMatchObject({ accepted: 500, total: 500 });
  });
});
