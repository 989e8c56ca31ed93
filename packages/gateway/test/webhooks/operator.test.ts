/**
 * The operator's side of delivery-report webhooks: a receiver down past the last retry leaves the
 * delivery failed (and nothing more is sent), the operator reads its attempt log and redelivers it,
 * or every failure since a time; revoking a key stops its webhooks; a new URL readdresses pending
 * ones. Through /admin/v1 and through `tms admin webhooks` (a real subprocess on the same store).
 * SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeFinishedWebhookDeliveries } from '../../src/services/webhook-deliveries.ts';
import { STORE_KINDS } from '../harness.ts';
import { ISO_UTC_MS, expectError } from '../api/helpers.ts';
import { runAdminJson, runTms } from '../operator/processes.ts';
import { TEST_RETRY_DELAYS_MS, createHookKey, hooksFor, startWebhookStack, verifyHook, waitFor, type HookKey, type WebhookStack } from './support.ts';

/** Paths the receiver refuses (503) until a test says otherwise. */
const down = new Set<string>();

describe.each(STORE_KINDS)('webhook deliveries, the operator side (%s)', (kind) => {
  let stack: WebhookStack;
  /** A key whose receiver is down. */
  let downKey: HookKey;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    stack = await startWebhookStack(kind, { responder: (hook) => (down.has(hook.path) ? { status: 503, body: 'maintenance' } : { status: 200 }) });
    downKey = await createHookKey(stack.gateway, stack.workspaceId, stack.receiver.url('/down'));
    down.add('/down');
    const { config, database } = stack.gateway;
    cliEnv = { ...database.env, TMS_LOG_LEVEL: 'silent', TMS_ADMIN_TOKEN: config.adminToken!, TMS_MASTER_KEY: config.masterKey!.toString('hex'), TMS_WEBHOOK_ALLOW_PRIVATE: 'true' };
  });
  afterAll(async () => stack?.close());

  const deliveryOf = async (messageId: string) => {
    const list = await stack.gateway.admin('GET', `/webhook-deliveries?workspace_id=${stack.workspaceId}&limit=500`);
    expect(list.status, list.text).toBe(200);
    const found = list.body.deliveries.find((row: { message_id: string }) => row.message_id === messageId);
    if (!found) return undefined;
    return (await stack.gateway.admin('GET', `/webhook-deliveries/${found.id}`)).body;
  };
  const settled = (messageId: string, status: string) => waitFor(() => deliveryOf(messageId), (row) => row?.status === status, `${messageId} ${status}`, 60_000);

  it('fails a delivery after 1 + 5 attempts, sends nothing more, and redelivers it on request with the same id and bytes', async () => {
    const msgId = await stack.send({}, downKey);
    const failed = await settled(msgId, 'failed');
    expect(failed).toMatchObject({
      status: 'failed',
      attempts: 1 + TEST_RETRY_DELAYS_MS.length,
      last_status_code: 503,
      last_error: 'HTTP 503: maintenance',
      failed_at: expect.stringMatching(ISO_UTC_MS),
      delivered_at: null,
      next_attempt_at: null,
      url: stack.receiver.url('/down'),
    });
    expect(failed.attempt_log.map((attempt: { outcome: string }) => attempt.outcome)).toEqual(['retry', 'retry', 'retry', 'retry', 'retry', 'failed']);
    // Longer than the last delay: no seventh attempt comes.
    await new Promise((resolve) => setTimeout(resolve, 3 * TEST_RETRY_DELAYS_MS.at(-1)!));
    const attempts = hooksFor(stack.receiver, msgId);
    expect(attempts).toHaveLength(6);

    down.delete('/down');
    try {
      const redelivered = await stack.gateway.admin('POST', `/webhook-deliveries/${failed.id}/redeliver`);
      expect(redelivered.status, redelivered.text).toBe(200);
      expect(redelivered.body).toMatchObject({ id: failed.id, status: 'pending', failed_at: null, last_error: null });
      const delivered = await settled(msgId, 'delivered');
      expect(delivered).toMatchObject({ attempts: 7, last_status_code: 200 });
      expect(delivered.attempt_log.at(-1)).toMatchObject({ attempt: 7, status_code: 200, outcome: 'delivered' });
      const last = hooksFor(stack.receiver, msgId).at(-1)!;
      expect(last.headers['x-gateway-attempt']).toBe('7');
      expect(last.headers['x-gateway-delivery-id']).toBe(failed.id);
      expect(last.raw.equals(attempts[0]!.raw)).toBe(true);
      verifyHook(last, downKey.key);
    } finally {
      down.add('/down');
    }
  });

  it('redelivers every failure since a time to its key\'s current URL, and skips those whose key is revoked', async () => {
    const since = new Date().toISOString();
    const doomedKey = await createHookKey(stack.gateway, stack.workspaceId, stack.receiver.url('/down'));
    const ids = await Promise.all([stack.send({}, downKey), stack.send({}, downKey), stack.send({}, doomedKey)]);
    for (const id of ids) await settled(id, 'failed');
    expect((await stack.gateway.admin('POST', `/api-keys/${doomedKey.id}/revoke`)).status).toBe(200);
    // The receiver moved: failed deliveries follow the key's URL when they are redelivered.
    expect((await stack.gateway.admin('PATCH', `/api-keys/${downKey.id}`, { webhook_url: stack.receiver.url('/moved') })).status).toBe(200);

    const answer = await stack.gateway.admin('POST', '/webhook-deliveries/redeliver-failed', { failed_since: since, workspace_id: stack.workspaceId });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({ redelivered: 2, skipped: 1, failed_since: expect.stringMatching(ISO_UTC_MS) });
    for (const id of ids.slice(0, 2)) {
      const row = await settled(id, 'delivered');
      expect(row.url).toBe(stack.receiver.url('/moved'));
      const hook = hooksFor(stack.receiver, id).at(-1)!;
      expect(hook.path).toBe('/moved');
      verifyHook(hook, downKey.key);
    }
    expect((await deliveryOf(ids[2]!)).status).toBe('failed');
    const refused = await stack.gateway.admin('POST', `/webhook-deliveries/${(await deliveryOf(ids[2]!)).id}/redeliver`);
    expectError(refused, 'webhook_delivery_not_redeliverable', /revoked/);
    expect((await stack.gateway.admin('PATCH', `/api-keys/${downKey.id}`, { webhook_url: stack.receiver.url('/down') })).status).toBe(200);
  });

  it('stops a revoked key\'s webhooks: its pending deliveries are cancelled and never sent again', async () => {
    const key = await createHookKey(stack.gateway, stack.workspaceId, stack.receiver.url('/revoked-soon'));
    down.add('/revoked-soon');
    const msgId = await stack.send({}, key);
    await waitFor(() => hooksFor(stack.receiver, msgId), (hooks) => hooks.length >= 2, 'two refused attempts');
    expect((await stack.gateway.admin('POST', `/api-keys/${key.id}/revoke`)).status).toBe(200);
    const row = await settled(msgId, 'cancelled');
    expect(row.last_error).toMatch(/revoked/);
    const seen = hooksFor(stack.receiver, msgId).length;
    down.delete('/revoked-soon');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // At most the attempt that was in flight at the moment of revocation.
    expect(hooksFor(stack.receiver, msgId).length).toBeLessThanOrEqual(seen + 1);
    expect((await deliveryOf(msgId)).status).toBe('cancelled');
  });

  it('sends pending deliveries to a key\'s new URL, and cancels them when the URL is removed', async () => {
    const moving = await createHookKey(stack.gateway, stack.workspaceId, stack.receiver.url('/old'));
    const removed = await createHookKey(stack.gateway, stack.workspaceId, stack.receiver.url('/gone'));
    down.add('/old');
    down.add('/gone');
    const movingId = await stack.send({}, moving);
    const removedId = await stack.send({}, removed);
    await waitFor(() => [hooksFor(stack.receiver, movingId).length, hooksFor(stack.receiver, removedId).length], ([a, b]) => a! >= 1 && b! >= 1, 'first attempts');
    expect((await stack.gateway.admin('PATCH', `/api-keys/${moving.id}`, { webhook_url: stack.receiver.url('/new') })).status).toBe(200);
    expect((await stack.gateway.admin('PATCH', `/api-keys/${removed.id}`, { webhook_url: null })).status).toBe(200);
    const moved = await settled(movingId, 'delivered');
    expect(moved.url).toBe(stack.receiver.url('/new'));
    expect(hooksFor(stack.receiver, movingId).at(-1)!.path).toBe('/new');
    expect((await settled(removedId, 'cancelled')).last_error).toMatch(/no webhook URL/);
  });

  it('lists with filters, answers 400, 404 and 409 in the error shape, and needs the operator token', async () => {
    const all = await stack.gateway.admin('GET', `/webhook-deliveries?workspace_id=${stack.workspaceId}&limit=500`);
    expect(all.body.count).toBeGreaterThanOrEqual(6);
    const createdTimes = all.body.deliveries.map((row: { created_at: string }) => Date.parse(row.created_at));
    expect([...createdTimes].sort((a, b) => b - a)).toEqual(createdTimes);
    const delivered = await stack.gateway.admin('GET', '/webhook-deliveries?status=delivered&limit=500');
    expect(delivered.body.deliveries.length).toBeGreaterThan(0);
    expect(delivered.body.deliveries.every((row: { status: string }) => row.status === 'delivered')).toBe(true);
    const future = await stack.gateway.admin('GET', `/webhook-deliveries?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect(future.body).toEqual({ deliveries: [], count: 0 });
    const paged = await stack.gateway.admin('GET', `/webhook-deliveries?workspace_id=${stack.workspaceId}&limit=2&offset=1`);
    expect(paged.body.deliveries.map((row: { id: string }) => row.id)).toEqual(all.body.deliveries.slice(1, 3).map((row: { id: string }) => row.id));

    expectError(await stack.gateway.admin('GET', '/webhook-deliveries?status=lost'), 'invalid_request');
    expectError(await stack.gateway.admin('GET', '/webhook-deliveries?since=yesterday'), 'invalid_date_range');
    expectError(await stack.gateway.admin('GET', '/webhook-deliveries/dlv_missing'), 'webhook_delivery_not_found');
    expectError(await stack.gateway.admin('POST', '/webhook-deliveries/dlv_missing/redeliver'), 'webhook_delivery_not_found');
    expectError(await stack.gateway.admin('POST', '/webhook-deliveries/redeliver-failed', {}), 'invalid_request');
    expectError(await stack.gateway.admin('POST', '/webhook-deliveries/redeliver-failed', { failed_since: 'not a time' }), 'invalid_date_range');
    expectError(await stack.gateway.request('GET', '/admin/v1/webhook-deliveries'), 'unauthenticated');
    expectError(await stack.gateway.request('POST', `/admin/v1/webhook-deliveries/${all.body.deliveries[0].id}/redeliver`, { key: stack.key.key }), 'unauthenticated');

    // A pending delivery cannot be redelivered.
    const hanging = await createHookKey(stack.gateway, stack.workspaceId, stack.receiver.url('/hang'));
    stack.receiver.respond((hook) => (hook.path === '/hang' ? { hang: true } : down.has(hook.path) ? { status: 503 } : { status: 200 }));
    const msgId = await stack.send({}, hanging);
    const pending = await waitFor(() => deliveryOf(msgId), (row) => row !== undefined, 'the delivery');
    expect(pending.status).toBe('pending');
    expectError(await stack.gateway.admin('POST', `/webhook-deliveries/${pending.id}/redeliver`), 'webhook_delivery_pending');
    expect((await stack.gateway.admin('PATCH', `/api-keys/${hanging.id}`, { webhook_url: null })).status).toBe(200);
  });

  it('tms admin webhooks: list, show with the attempt log, redeliver one, redeliver every failure since a time', async () => {
    const since = new Date().toISOString();
    const msgId = await stack.send({}, downKey);
    const failed = await settled(msgId, 'failed');

    const listed = await runAdminJson(['webhooks', 'list', '--workspace', stack.workspaceId, '--status', 'failed', '--since', since], cliEnv);
    expect(listed.deliveries.map((row: { id: string }) => row.id)).toContain(failed.id);
    expect(listed.deliveries.every((row: { status: string }) => row.status === 'failed')).toBe(true);
    // --limit and --offset page as limit= and offset= do on /admin/v1.
    const ids = (page: { deliveries: { id: string }[] }) => page.deliveries.map((row) => row.id);
    const firstTwo = ids(await runAdminJson(['webhooks', 'list', '--workspace', stack.workspaceId, '--limit', '2'], cliEnv));
    expect(firstTwo).toHaveLength(2);
    const second = ids(await runAdminJson(['webhooks', 'list', '--workspace', stack.workspaceId, '--limit', '1', '--offset', '1'], cliEnv));
    expect(second).toEqual([firstTwo[1]]);
    expect(ids((await stack.gateway.admin('GET', `/webhook-deliveries?workspace_id=${stack.workspaceId}&limit=1&offset=1`)).body)).toEqual(second);
    const shown = await runAdminJson(['webhooks', 'show', failed.id], cliEnv);
    expect(shown).toMatchObject({ id: failed.id, message_id: msgId, status: 'failed', attempts: 6 });
    expect(shown.attempt_log).toHaveLength(6);
    expect(JSON.parse(shown.body).message_id).toBe(msgId);
    const human = await runTms(['admin', 'webhooks', 'show', failed.id], cliEnv);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/status\s+failed/);

    down.delete('/down');
    try {
      const all = await runAdminJson(['webhooks', 'redeliver-failed', '--since', since, '--workspace', stack.workspaceId], cliEnv);
      expect(all).toMatchObject({ redelivered: 1, skipped: 0 });
      await settled(msgId, 'delivered');
      const again = await runAdminJson(['webhooks', 'redeliver', failed.id], cliEnv);
      expect(again).toMatchObject({ id: failed.id, status: 'pending' });
      const done = await settled(msgId, 'delivered');
      expect(done.attempts).toBe(8);
    } finally {
      down.add('/down');
    }
    const missing = await runTms(['admin', 'webhooks', 'show', 'dlv_missing'], cliEnv);
    expect(missing.code).toBe(4);
    const usage = await runTms(['admin', 'webhooks', 'redeliver-failed'], cliEnv);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toMatch(/--since is required/);
    // Seven `tms` processes, each starting Node and opening the store: more than the default 30 s on a busy machine.
  }, 120_000);

  it('purges finished reports and their attempt logs after the retention period, never pending ones', async () => {
    const deliveredId = await stack.send();
    const delivered = await settled(deliveredId, 'delivered');
    const pendingKey = await createHookKey(stack.gateway, stack.workspaceId, stack.receiver.url('/pending-forever'));
    down.add('/pending-forever');
    const pendingId = await stack.send({}, pendingKey);
    await waitFor(() => hooksFor(stack.receiver, pendingId), (hooks) => hooks.length >= 1, 'a refused attempt');
    const pending = await deliveryOf(pendingId);
    expect(pending.status).toBe('pending');

    // Last in this suite: it purges what the tests above finished. Today nothing is old enough; the worker's hourly task runs the same function.
    const { runtime } = stack.gateway;
    const maintenance = runtime.contextFor({ kind: 'task', task: 'maintenance' });
    await purgeFinishedWebhookDeliveries({ ctx: maintenance, input: {} });
    expect((await stack.gateway.admin('GET', `/webhook-deliveries/${delivered.id}`)).status).toBe(200);

    const afterRetention = { ...maintenance, clock: () => Date.now() + (runtime.config.webhooks.retentionDays + 1) * 24 * 60 * 60 * 1000 };
    expect(await purgeFinishedWebhookDeliveries({ ctx: afterRetention, input: {} })).toBeGreaterThanOrEqual(1);
    expectError(await stack.gateway.admin('GET', `/webhook-deliveries/${delivered.id}`), 'webhook_delivery_not_found');
    const attemptsLeft = await runtime.store.db.selectFrom('webhook_attempts').select('id').where('delivery_id', '=', delivered.id).execute();
    expect(attemptsLeft).toEqual([]);
    expect((await deliveryOf(pendingId)).status).toBe('pending');
    expect((await stack.gateway.admin('PATCH', `/api-keys/${pendingKey.id}`, { webhook_url: null })).status).toBe(200);
  });
});
