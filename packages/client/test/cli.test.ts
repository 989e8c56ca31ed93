/**
 * The `tms-client` command as an integrator runs it (the bin, in its own process) against the real
 * gateway: every command, exit codes, and `batch` from a CSV file end to end, resumable.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowKeys } from '../src/cli/journal.ts';
import { Client } from '../src/index.ts';
import { CLIENT_BIN, REPO_ROOT, childEnvironment, oaId, orderTemplate, otpTemplate, startStack, stopAll, type Stack, type Workspace } from './harness.ts';

let stack: Stack;
let main: Workspace; // OA 1
let resumable: Workspace; // OA 2, a wallet for 6 orders
let small: Workspace; // OA 3, 4 messages a day
let dir: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT_BIN, ...args], { cwd: REPO_ROOT, env: childEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const as = (workspace: Workspace) => ({ TMS_API_KEY: workspace.apiKey, TMS_BASE_URL: stack.gatewayUrl });
const sdk = (workspace: Workspace) => new Client({ apiKey: workspace.apiKey, baseUrl: stack.gatewayUrl });

beforeAll(async () => {
  stack = await startStack({ oas: [{ n: 1, dailyQuota: 5000 }, { n: 2, dailyQuota: 5000 }, { n: 3, dailyQuota: 4 }] });
  main = await stack.provision({ name: 'main', oas: [{ n: 1, dailyQuota: 5000 }] });
  resumable = await stack.provision({ name: 'resumable', balance: 6 * 300, oas: [{ n: 2, dailyQuota: 5000 }] });
  small = await stack.provision({ name: 'small', oas: [{ n: 3, dailyQuota: 4 }] });
  dir = mkdtempSync(join(tmpdir(), 'tms-client-cli-'));
});

afterAll(async () => {
  await stack?.close();
  await stopAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('tms-client commands', () => {
  it('lists templates, sender accounts and quota, for people and for scripts', async () => {
    const templates = await cli(['templates'], as(main));
    expect(templates.code).toBe(0);
    expect(templates.stdout).toMatch(/^TEMPLATE_ID\s+STATUS\s+NAME/);
    expect(templates.stdout).toMatch(new RegExp(`^${otpTemplate(1)}\\s+ENABLE\\s+One-time password\\s+${oaId(1)}\\s+250\\s+otp\\* 4\\.\\.10$`, 'm'));

    const oas = await cli(['oas', '--json'], as(main));
    expect(JSON.parse(oas.stdout)).toEqual({ oas: [{ oa_id: oaId(1), name: 'Test OA 1' }], count: 1 });

    const quota = await cli(['quota', '--oa', oaId(1)], as(main));
    expect(quota.stdout).toMatch(/OA_ID\s+NAME\s+DAILY_QUOTA\s+USED\s+REMAINING\s+RESET_AT/);
    expect(quota.stdout).toContain(oaId(1));
  });

  it('sends, gets, lists and cancels; flags win over the environment', async () => {
    const sent = await cli(['send', '--template', otpTemplate(1), '--phone', '0912345678', '--param', 'otp=123456', '--tracking-id', 'cli-send-1', '--json']);
    expect(sent.code).toBe(2); // no key anywhere
    expect(sent.stderr).toContain('TMS_API_KEY');

    const withFlags = await cli(['send', '--api-key', main.apiKey, '--base-url', stack.gatewayUrl, '--template', otpTemplate(1), '--phone', '0912345678', '--param', 'otp=123456', '--tracking-id', 'cli-send-1', '--json'], {
      TMS_API_KEY: 'tms_live_not_this_one',
    });
    expect(withFlags.code).toBe(0);
    const { msg_id: msgId } = JSON.parse(withFlags.stdout);
    expect(msgId).toMatch(/^msg_/);

    const got = await cli(['get', msgId], as(main));
    expect(got.stdout).toMatch(new RegExp(`^msg_id\\s+${msgId}$`, 'm'));
    expect(got.stdout).toMatch(/^tracking_id\s+cli-send-1$/m);

    const listed = await cli(['list', '--tracking-id', 'cli-send-1'], as(main));
    expect(listed.stdout).toMatch(/^MSG_ID\s+STATUS\s+PHONE/);
    expect(listed.stdout).toContain(msgId);
    expect(listed.stdout).toContain('1 messages from offset 0');

    const later = await cli(['send', '--template', otpTemplate(1), '--phone', '0912345679', '--data', '{"otp":"654321"}', '--send-at', new Date(Date.now() + 3_600_000).toISOString()], as(main));
    expect(later.stdout).toMatch(/^scheduled (msg_\S+)/);
    const scheduledId = /^scheduled (msg_\S+)/.exec(later.stdout)![1]!;
    const cancelled = await cli(['cancel', scheduledId], as(main));
    expect(cancelled).toMatchObject({ code: 0, stdout: `cancelled ${scheduledId} (deleted and refunded)\n` });

    const gone = await cli(['get', scheduledId, '--json'], as(main));
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout).error).toMatchObject({ type: 'message_not_found', kind: 'not_found', status: 404, request_id: expect.any(String) });
  });

  it('tells failures from success by exit code', async () => {
    const wrongKey = await cli(['oas'], { TMS_API_KEY: 'tms_live_wrong', TMS_BASE_URL: stack.gatewayUrl });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('HTTP 401');
    expect((await cli(['frobnicate'], as(main))).code).toBe(2);
    expect((await cli(['list', '--status', 'lost'], as(main))).code).toBe(2);
    expect((await cli(['list', '--bogus'], as(main))).code).toBe(2);
  });
});

describe('tms-client batch FILE.csv', () => {
  const header = 'phone,tracking_id,customer_name,order_code,note';

  it('checks every row against the template before sending anything', async () => {
    const file = join(dir, 'invalid.csv');
    writeFileSync(file, [header, '0912345601,ok-1,An,A-1,', '0912345602,bad-1,,A-2,', '0912345603,bad-2,Chi,A-3,this note is far too long for it', ',bad-3,Dung,A-4,'].join('\n'));
    const run = await cli(['batch', file, '--template', orderTemplate(2)], as(resumable));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('nothing was sent');
    expect(run.stderr).toContain('line 3: customer_name is required');
    expect(run.stderr).toContain('line 4: note has 32 characters, the template allows 0 to 20');
    expect(run.stderr).toContain('line 5: phone is empty');

    const unknownColumn = join(dir, 'unknown-column.csv');
    writeFileSync(unknownColumn, 'phone,tracking_id,customer_name,order_code,coupon\n0912345601,ok-1,An,A-1,X\n');
    const second = await cli(['batch', unknownColumn, '--template', orderTemplate(2)], as(resumable));
    expect(second.code).toBe(2);
    expect(second.stderr).toContain('column "coupon" is not a param');
    expect((await sdk(resumable).messages.list()).count).toBe(0);
  });

  it('sends a file, stops when the wallet runs dry, and a rerun sends only the rest', async () => {
    const file = join(dir, 'orders.csv');
    const rows = Array.from({ length: 8 }, (_, i) => `09123456${10 + i},order-${i},"Nguyen, Van ${i}",A-${i},${i % 2 ? 'gate 2' : ''}`);
    writeFileSync(file, `${header}\r\n${rows.join('\r\n')}\r\n`);

    // The wallet pays for 6: chunks of 3 go, the third chunk is refused (402) and the run stops.
    const first = await cli(['batch', file, '--template', orderTemplate(2), '--chunk-size', '3'], as(resumable));
    expect(first.code).toBe(1);
    expect(first.stdout).toContain('8 recipients: 6 queued now, 0 scheduled, 0 already accepted earlier, 2 errors');
    expect(first.stdout).toMatch(/stopped: .*(wallet|balance)/i);
    expect(first.stderr).toMatch(/\[#+-*\]\s+\d+% 6\/8/);
    expect(readFileSync(`${file}.journal`, 'utf8').trim().split('\n').length).toBeGreaterThanOrEqual(6);

    await stack.admin('POST', `/workspaces/${resumable.id}/wallet/top-ups`, { amount: 10_000 });
    const second = await cli(['batch', file, '--template', orderTemplate(2), '--chunk-size', '3'], as(resumable));
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('8 recipients: 2 queued now, 0 scheduled, 6 already accepted earlier, 0 errors');

    const third = await cli(['batch', file, '--template', orderTemplate(2), '--json'], as(resumable));
    expect(third.code).toBe(0);
    const summary = JSON.parse(third.stdout);
    expect(summary).toMatchObject({ total: 8, queued: 0, already_accepted: 8, errors: 0 });
    expect(summary.results[0]).toMatchObject({ line: 2, phone: '0912345610', tracking_id: 'order-0', status: 'already_accepted', msg_id: expect.stringMatching(/^msg_/) });

    // Exactly one message per row, with the row's own data.
    const messages = (await sdk(resumable).messages.list({ limit: 200 })).messages;
    expect(messages.map((m) => m.tracking_id).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `order-${i}`));
    const ledger = (await stack.admin('GET', `/workspaces/${resumable.id}/wallet`)).ledger;
    expect(ledger.filter((entry: { kind: string }) => entry.kind === 'charge').reduce((sum: number, entry: { amount: number }) => sum + entry.amount, 0)).toBe(-8 * 300);
  });

  it('settles a chunk whose answer was lost in a crash by resending it with its key: no duplicates', async () => {
    const file = join(dir, 'crash.csv');
    writeFileSync(file, `phone,tracking_id,otp\n0912345631,crash-1,111111\n0912345632,crash-2,222222\n0912345633,,333333\n`);
    const recipients = [
      { phone: '0912345631', template_data: { otp: '111111' }, tracking_id: 'crash-1' },
      { phone: '0912345632', template_data: { otp: '222222' }, tracking_id: 'crash-2' },
      { phone: '0912345633', template_data: { otp: '333333' } },
    ];
    // What a run that died between the gateway's answer and its journal line leaves behind:
    // the request was accepted, the journal only says it was about to be sent.
    const body = { template_id: otpTemplate(1), recipients };
    const key = 'crashed-run-chunk-1';
    const accepted = await sdk(main).messages.batch(body, { idempotencyKey: key });
    expect(accepted.accepted).toBe(3);
    writeFileSync(`${file}.journal`, `${JSON.stringify({ type: 'pending', key, at: Date.now(), rows: rowKeys(otpTemplate(1), recipients), body })}\n`);

    const run = await cli(['batch', file, '--template', otpTemplate(1), '--json'], as(main));
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ total: 3, queued: 0, already_accepted: 3 });
    expect(JSON.parse(run.stdout).results.map((r: { msg_id: string }) => r.msg_id)).toEqual(accepted.results.map((r) => r.msg_id));
    for (const trackingId of ['crash-1', 'crash-2']) expect((await sdk(main).messages.list({ tracking_id: trackingId })).count).toBe(1);
    expect((await sdk(main).messages.list({ phone: '0912345633' })).count).toBe(1);
  });

  it('splits by the daily quota like sendLarge: today’s share now, the rest at the reset', async () => {
    const file = join(dir, 'small-quota.csv');
    writeFileSync(file, ['phone,tracking_id,otp', ...Array.from({ length: 6 }, (_, i) => `091234564${i},quota-${i},123456`)].join('\n'));
    const resetAt = (await sdk(small).quota.get()).quotas[0]!.reset_at;
    const run = await cli(['batch', file, '--template', otpTemplate(3), '--json', '--quiet'], as(small));
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ total: 6, queued: 4, scheduled: 2, errors: 0 });
    expect(summary.results.slice(4).map((r: { scheduled_at: string }) => Date.parse(r.scheduled_at))).toEqual([Date.parse(resetAt), Date.parse(resetAt)]);
  });
});
