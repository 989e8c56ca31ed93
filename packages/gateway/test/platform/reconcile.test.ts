/**
 * The dispatch queue's claim, outcome and reconciliation statements against a real store, driven
 * with explicit times (no worker runs): the sequences that decide whether a message can go twice.
 * Messages are accepted through the public API; the queue functions are then called as a worker
 * and its reconciler call them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDueMessages, reconcileExpiredClaims, recordDispatchOutcomes, type ClaimedMessage } from '../../src/store/dispatch-queue.ts';
import { STORE_KINDS, VALID_DATA, seedWorkspace, startTestGateway, type SeededWorkspace, type TestGateway } from '../harness.ts';

const LEASE_MS = 1000;
const GRACE_MS = 5000;
const HOUR_MS = 3_600_000;

describe.each(STORE_KINDS)('dispatch queue reconciliation (%s)', (kind) => {
  let gateway: TestGateway;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    gateway = await startTestGateway(kind);
    ws = await seedWorkspace(gateway, { balance: 100_000_000 });
  });
  afterAll(async () => gateway?.close());

  const store = () => gateway.runtime.deps.store;

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

  const statusOf = async (id: string) =>
    store().db.selectFrom('messages').select(['status', 'unconfirmed_since']).where('id', '=', id).executeTakeFirstOrThrow();

  it('waits the grace period again for a message re-claimed after an earlier unconfirmed claim', async () => {
    const [id] = await accept(1);
    const start = Date.now() + HOUR_MS;
    const [first] = await claim([id!], start);
    // The first worker outlives its lease: the reconciler marks the send unconfirmed.
    expect(await reconcileExpiredClaims(store(), { now: start + LEASE_MS + 1, limit: 100, graceMs: GRACE_MS })).toEqual({ unconfirmed: [id], requeued: [] });
    // That worker's late outcome, a retry, is believed: the message is queued again and no longer unconfirmed.
    await recordDispatchOutcomes(store(), [{ kind: 'retry', message: first!, dueAt: start + 2 * LEASE_MS }], start + LEASE_MS + 2);
    expect(await statusOf(id!)).toEqual({ status: 'queued', unconfirmed_since: null });
    // A second worker claims it and dies too: its send gets the whole grace period, not an immediate resend.
    const second = start + 3 * LEASE_MS;
    await claim([id!], second);
    expect(await reconcileExpiredClaims(store(), { now: second + LEASE_MS + 1, limit: 100, graceMs: GRACE_MS })).toEqual({ unconfirmed: [id], requeued: [] });
    expect(await reconcileExpiredClaims(store(), { now: second + LEASE_MS + 2, limit: 100, graceMs: GRACE_MS })).toEqual({ unconfirmed: [], requeued: [] });
    expect(await reconcileExpiredClaims(store(), { now: second + LEASE_MS + GRACE_MS + 2, limit: 100, graceMs: GRACE_MS })).toEqual({ unconfirmed: [], requeued: [id] });
    expect(await statusOf(id!)).toEqual({ status: 'queued', unconfirmed_since: null });
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
    const sent = await store().db.selectFrom('messages').select(['id', 'provider_msg_id']).where('status', '=', 'sent').execute();
    expect(sent).toHaveLength(5000);
    expect(new Set(sent.map((row) => row.id))).toEqual(new Set(ids));
  });
});
