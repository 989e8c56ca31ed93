/**
 * The dispatch queue's claim, outcome and reconciliation statements against a real store, driven
 * with explicit times (no worker runs): the sequences that decide whether a message can go twice.
 * Messages are accepted through the public API; the queue functions are then called as a worker
 * and its reconciler call them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDeliveryEvents } from '../../src/infrastructure/delivery-event-writer.ts';
import { runInTransaction } from '../../src/store/database.ts';
import { claimDueMessages, reconcileExpiredClaims, recordDispatchOutcomes, type ClaimedMessage } from '../../src/store/dispatch-queue.ts';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';

const LEASE_MS = 1000;
const GRACE_MS = 5000;
const HOUR_MS = 3_600_000;
const MAX_ATTEMPTS = 5;
const EXHAUSTED = { code: -9003, message: 'Platform unavailable after 5 attempts', reason: 'retries exhausted' };

describe.each(STORE_KINDS)('dispatch queue reconciliation (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway, { balance: 100_000_000 });
  });
  afterAll(async () => gateway?.close());

  const store = () => gateway.runtime.store;

  /** Accepts `count` messages (queued, due now) and returns their ids. */
  async function accept(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let offset = 0; offset < count; offset += 500) {
      const recipients = Array.from({ length: Math.min(500, count - offset) }, (_unused, index) => ({ phone: `0913${String(offset + index).padStart(6, '0')}`, template_data: VALID_DATA }));
      const response = await gateway.request('POST', '/api/v1/messages/batch', { key: ws.apiKey, body: { template_id: ws.templateId, recipients } });
      expect(response.status, response.text).toBe(202);
      ids.push(...(response.body.results as { msg_id: string }[]).map((result) => result.msg_id));
    }
    return ids;
  }

  /** Claims everything due at `now`, checks the given messages were among it, and returns theirs. */
  async function claim(ids: string[], now: number): Promise<ClaimedMessage[]> {
    const wanted = new Set(ids);
    const claimed = (await claimDueMessages(store(), { now, limit: 10_000, leaseMs: LEASE_MS })).filter((message) => wanted.has(message.id));
    expect(claimed).toHaveLength(ids.length);
    return claimed;
  }

  const reconcile = (now: number) => reconcileExpiredClaims(store(), { now, limit: 100, graceMs: GRACE_MS, maxAttempts: MAX_ATTEMPTS, exhausted: EXHAUSTED });
  /** The same, reporting only what happened to `id` (earlier tests leave claims of their own to reconcile). */
  const reconcileOne = async (id: string, now: number) => {
    const result = await reconcile(now);
    const only = (ids: string[]) => ids.filter((other) => other === id);
    return { unconfirmed: only(result.unconfirmed), requeued: only(result.requeued), failed: only(result.failed) };
  };

  const statusOf = async (id: string) =>
    store().db.selectFrom('message_states').select(['status', 'unconfirmed_since']).where('id', '=', id).executeTakeFirstOrThrow();

  it('waits the grace period again for a message re-claimed after an earlier unconfirmed claim', async () => {
    const [id] = await accept(1);
    const start = Date.now() + HOUR_MS;
    const [first] = await claim([id!], start);
    // The first worker outlives its lease: the reconciler marks the send unconfirmed.
    expect(await reconcile(start + LEASE_MS + 1)).toEqual({ unconfirmed: [id], requeued: [], failed: [] });
    // That worker's late outcome, a retry, is believed: the message is queued again and no longer unconfirmed.
    await recordDispatchOutcomes(store(), [{ kind: 'retry', message: first!, dueAt: start + 2 * LEASE_MS }], start + LEASE_MS + 2);
    expect(await statusOf(id!)).toEqual({ status: 'queued', unconfirmed_since: null });
    // A second worker claims it and dies too: its send gets the whole grace period, not an immediate resend.
    const second = start + 3 * LEASE_MS;
    await claim([id!], second);
    expect(await reconcile(second + LEASE_MS + 1)).toEqual({ unconfirmed: [id], requeued: [], failed: [] });
    expect(await reconcile(second + LEASE_MS + 2)).toEqual({ unconfirmed: [], requeued: [], failed: [] });
    expect(await reconcile(second + LEASE_MS + GRACE_MS + 2)).toEqual({ unconfirmed: [], requeued: [id], failed: [] });
    expect(await statusOf(id!)).toEqual({ status: 'queued', unconfirmed_since: null });
  });

  it('keeps a send with an unknown outcome unconfirmed until its wait ends, then queues it again with its attempt used', async () => {
    const [id] = await accept(1);
    const start = Date.now() + 3 * HOUR_MS;
    const [claimed] = await claim([id!], start);
    // The worker's send timed out after the request was written: it records the outcome as unknown.
    await recordDispatchOutcomes(store(), [{ kind: 'unconfirmed', message: claimed!, waitUntil: start + 10 + GRACE_MS }], start + 10);
    expect(await statusOf(id!)).toEqual({ status: 'sending', unconfirmed_since: start + 10 });
    // Its claim's own lease has passed, but the wait for a trace has not: nothing happens.
    expect(await reconcileOne(id!, start + LEASE_MS + 1)).toEqual({ unconfirmed: [], requeued: [], failed: [] });
    expect(await reconcileOne(id!, start + 11 + GRACE_MS)).toEqual({ unconfirmed: [], requeued: [id], failed: [] });
    const row = await store().db.selectFrom('message_states').select(['status', 'attempts']).where('id', '=', id!).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'queued', attempts: 1 });
  });

  it('fails and refunds an unconfirmed send that has no attempt left, instead of sending it again', async () => {
    const balanceOf = async () => (await gateway.admin('GET', `/workspaces/${ws.workspaceId}/wallet`)).body.balance as number;
    const before = await balanceOf();
    const [id] = await accept(1);
    expect(await balanceOf()).toBeLessThan(before);
    const start = Date.now() + 4 * HOUR_MS;
    await store().db.updateTable('message_states').set({ attempts: MAX_ATTEMPTS - 1 }).where('id', '=', id!).execute();
    const [claimed] = await claim([id!], start);
    expect(claimed!.attempts).toBe(MAX_ATTEMPTS);
    await recordDispatchOutcomes(store(), [{ kind: 'unconfirmed', message: claimed!, waitUntil: start + 10 + GRACE_MS }], start + 10);
    expect(await reconcileOne(id!, start + 11 + GRACE_MS)).toEqual({ unconfirmed: [], requeued: [], failed: [id] });
    const row = await store().db.selectFrom('message_states').select(['status', 'error_code']).where('id', '=', id!).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'failed', error_code: EXHAUSTED.code });
    expect(await balanceOf()).toBe(before);
  });

  it('refunds a failure once when one round holds two outcomes of the same message (a late one and a new claim\'s)', async () => {
    const balanceOf = async () => (await gateway.admin('GET', `/workspaces/${ws.workspaceId}/wallet`)).body.balance as number;
    const before = await balanceOf();
    const [id] = await accept(1);
    const start = Date.now() + 7 * HOUR_MS;
    const [first] = await claim([id!], start);
    // Its outcome waits unwritten past the lease and the grace period: the message is queued and claimed again.
    await reconcile(start + LEASE_MS + 1);
    await reconcile(start + LEASE_MS + GRACE_MS + 2);
    const [second] = await claim([id!], start + LEASE_MS + GRACE_MS + 3);
    const failure = { kind: 'failed', code: -124, errorMessage: 'Phone number is invalid', reason: 'invalid_phone' } as const;
    await recordDispatchOutcomes(store(), [{ ...failure, message: first! }, { ...failure, message: second! }], start + LEASE_MS + GRACE_MS + 4);
    expect(await statusOf(id!)).toMatchObject({ status: 'failed' });
    expect(await balanceOf()).toBe(before);
  });

  it('records the send time of a message whose delivery event came before its sent record, and keeps it delivered', async () => {
    const [early, usual] = await accept(2);
    const now = Date.now() + 9 * HOUR_MS;
    const claimed = await claim([early!, usual!], now);
    const event = { message: { id: early! }, platformMsgId: 'platform-early', oaId: ws.oaId, deliveredAt: now + 2, now: now + 2 };
    await runInTransaction(store(), (trx) => applyDeliveryEvents(trx, store().dialect, [event], now + 2));
    await recordDispatchOutcomes(store(), claimed.map((message) => ({ kind: 'sent', message, providerMsgId: `platform-${message.id === early ? 'early' : 'usual'}`, sentAt: now + 1 })), now + 3);
    const rows = await store().db.selectFrom('message_states').select(['id', 'status', 'provider_msg_id', 'sent_at', 'delivered_at']).where('id', 'in', [early!, usual!]).execute();
    expect(rows.find((row) => row.id === early)).toMatchObject({ status: 'delivered', provider_msg_id: 'platform-early', sent_at: now + 1, delivered_at: now + 2 });
    expect(rows.find((row) => row.id === usual)).toMatchObject({ status: 'sent', provider_msg_id: 'platform-usual', sent_at: now + 1, delivered_at: null });
  });

  it('gives a released claim its attempt back and queues it at the given time', async () => {
    const [id] = await accept(1);
    const start = Date.now() + 5 * HOUR_MS;
    const [claimed] = await claim([id!], start);
    expect(claimed!.attempts).toBe(1);
    await recordDispatchOutcomes(store(), [{ kind: 'released', message: claimed!, dueAt: start + 1234 }], start + 1);
    const row = await store().db.selectFrom('message_states').select(['status', 'attempts', 'due_at', 'lease_expires_at']).where('id', '=', id!).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'queued', attempts: 0, due_at: start + 1234, lease_expires_at: null });
  });

  it('records a round of 5,000 sent messages (more bound values than one SQLite statement takes)', async () => {
    const ids = await accept(5000);
    const now = Date.now() + 2 * HOUR_MS;
    const claimed = await claim(ids, now);
    await recordDispatchOutcomes(
      store(),
      claimed.map((message, index) => ({ kind: 'sent', message, providerMsgId: `p${index}`, sentAt: now + 1 })),
      now + 2,
    );
    const sent = await store().db.selectFrom('message_states').select(['id', 'provider_msg_id']).where('status', '=', 'sent').where('sent_at', '=', now + 1).execute();
    expect(sent).toHaveLength(5000);
    expect(new Set(sent.map((row) => row.id))).toEqual(new Set(ids));
  });
});
