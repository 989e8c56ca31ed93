/**
 * sendLarge against a sender account with a small daily quota (5 a day, on the platform and in the
 * gateway's configuration alike): today's share goes now, the rest is scheduled at the following
 * days' quota reset, and every recipient's outcome is reported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type SendLargeChunk, type SendLargeProgress } from '../src/index.ts';
import { oaId, otpTemplate, startStack, stopAll, waitFor, type Stack } from './harness.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const DAILY_QUOTA = 5;

let stack: Stack;
let client: Client;
let resetAt: number;

const vietnamDay = (epochMs: number) => new Date(epochMs + 7 * 3_600_000).toISOString().slice(0, 10);
const recipients = (count: number, prefix: string) =>
  Array.from({ length: count }, (_, i) => ({ phone: `09123456${String(i).padStart(2, '0')}`, tracking_id: `${prefix}-${i}`, template_data: { otp: '123456' } }));

beforeAll(async () => {
  stack = await startStack({ oas: [{ n: 1, dailyQuota: DAILY_QUOTA }, { n: 2, dailyQuota: 5000 }] });
  const workspace = await stack.provision({ oas: [{ n: 1, dailyQuota: DAILY_QUOTA }] });
  client = new Client({ apiKey: workspace.apiKey, baseUrl: stack.gatewayUrl });
  resetAt = Date.parse((await client.quota.get({ oa_id: oaId(1) })).quotas[0]!.reset_at);
});

afterAll(async () => {
  await stack?.close();
  await stopAll();
});

describe('sendLarge', () => {
  it('sends today what the quota allows and schedules the rest at the next days’ reset, reporting every recipient', async () => {
    const chunks: SendLargeChunk[] = [];
    const progress: SendLargeProgress[] = [];
    const report = await client.sendLarge({
      templateId: otpTemplate(1),
      recipients: recipients(12, 'large'),
      chunkSize: 2,
      beforeChunk: (chunk) => void chunks.push(chunk),
      onProgress: (update) => void progress.push(update),
    });

    expect(report).toMatchObject({ total: 12, queued: 5, scheduled: 7, errors: 0, stoppedBy: null });
    expect(report.quota).toMatchObject({ oa_id: oaId(1), daily_quota: DAILY_QUOTA, remaining: DAILY_QUOTA });
    expect(report.days.map((day) => [day.day, day.send_at === null ? null : Date.parse(day.send_at), day.accepted])).toEqual([
      [vietnamDay(Date.now()), null, 5],
      [vietnamDay(resetAt), resetAt, 5],
      [vietnamDay(resetAt + DAY_MS), resetAt + DAY_MS, 2],
    ]);
    // One outcome per recipient, in order: today's, then tomorrow's, then the day after's.
    expect(report.results.map((r) => (r.status === 'scheduled' ? Date.parse(r.scheduled_at) : r.status))).toEqual([
      ...Array(5).fill('queued'),
      ...Array(5).fill(resetAt),
      ...Array(2).fill(resetAt + DAY_MS),
    ]);
    expect(report.results.every((r, index) => r.index === index && r.status !== 'error' && r.msg_id.startsWith('msg_'))).toBe(true);
    // Chunks never cross a day's quota: 2 + 2 + 1 today, the same tomorrow, then 2.
    expect(chunks.map((chunk) => chunk.body.recipients.length)).toEqual([2, 2, 1, 2, 2, 1, 2]);
    expect(new Set(chunks.map((chunk) => chunk.idempotencyKey)).size).toBe(chunks.length);
    expect(progress.map((p) => p.done)).toEqual([2, 4, 5, 7, 9, 10, 12]);

    // What the service holds agrees: 12 messages, 5 due now, 5 tomorrow, 2 the day after.
    const held = await client.messages.list({ template_id: otpTemplate(1), limit: 200 });
    const byDue = new Map<string, number>();
    for (const message of held.messages) byDue.set(String(message.scheduled_at && Date.parse(message.scheduled_at)), (byDue.get(String(message.scheduled_at && Date.parse(message.scheduled_at))) ?? 0) + 1);
    expect(Object.fromEntries(byDue)).toEqual({ null: 5, [resetAt]: 5, [resetAt + DAY_MS]: 2 });
    await waitFor(() => client.quota.get({ oa_id: oaId(1) }), (q) => q.quotas[0]!.remaining === 0, "today's quota to be used up");
  });

  it('a second run the same day finds today and tomorrow full and fills the next free days', async () => {
    const report = await client.sendLarge({ templateId: otpTemplate(1), recipients: recipients(4, 'again'), chunkSize: 200 });
    expect(report).toMatchObject({ total: 4, queued: 0, scheduled: 4, errors: 0 });
    // Day after tomorrow had 2 of 5 taken by the first run: 3 fit there, the 4th goes a day later.
    expect(report.days.map((day) => [day.day, day.accepted])).toEqual([
      [vietnamDay(resetAt + DAY_MS), 3],
      [vietnamDay(resetAt + 2 * DAY_MS), 1],
    ]);
    expect(report.results.map((r) => r.status === 'scheduled' && Date.parse(r.scheduled_at))).toEqual([resetAt + DAY_MS, resetAt + DAY_MS, resetAt + DAY_MS, resetAt + 2 * DAY_MS]);
  });

  it('reports recipients the service would refuse without sending them, and sends the others', async () => {
    const report = await client.sendLarge({
      templateId: otpTemplate(1),
      recipients: [
        { phone: '0912345699', tracking_id: 'not valid!', template_data: { otp: '123456' } },
        { phone: '', template_data: { otp: '123456' } },
        { phone: '0912345698', tracking_id: 'fine-1', template_data: { otp: '123456' } },
        { phone: '0912345697', tracking_id: 'short-otp', template_data: { otp: '12' } },
      ],
    });
    expect(report.results.map((r) => (r.status === 'error' ? r.error.split(':')[0] : r.status))).toEqual(['invalid_tracking_id', 'missing_phone', 'scheduled', 'invalid_template_data']);
    expect((await client.messages.list({ tracking_id: 'not valid!' }).catch(() => ({ count: 0 }))).count).toBe(0);
  });

  it('stops at the first chunk the wallet cannot pay, and says which recipients were not sent', async () => {
    const poor = await stack.provision({ name: 'poor', balance: 3 * 250, oas: [{ n: 2, dailyQuota: 5000 }] });
    const report = await new Client({ apiKey: poor.apiKey, baseUrl: stack.gatewayUrl }).sendLarge({
      templateId: otpTemplate(2),
      recipients: recipients(5, 'poor'),
      chunkSize: 2,
    });
    expect(report.stoppedBy).toMatchObject({ kind: 'payment_required', status: 402 });
    expect(report.results.map((r) => (r.status === 'error' ? r.error.split(':')[0] : r.status))).toEqual(['queued', 'queued', 'payment_required', 'payment_required', 'not_sent']);
  });
});
