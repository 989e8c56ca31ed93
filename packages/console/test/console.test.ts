/**
 * The console in a real browser (Debian's Chromium through playwright-core), against the real
 * gateway and simulator: what a customer does with it, page by page, in both languages, and
 * axe-core on every page. Skipped without /usr/bin/chromium, except in CI (CI=true), where its
 * absence fails the run.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SENDER_ACCOUNT } from '../../gateway/src/services/demo.ts';
import { createConsoleUser } from '../../gateway/test/console-support.ts';
import { hooksFor, nextPhone, OTP_TEMPLATE, verifyHook, waitFor } from '../../gateway/test/webhooks/support.ts';
import { consoleUrl, heading, openPage, screenshot, seriousViolations, signIn, skipReason, startConsoleStack, type ConsoleStack } from './support.ts';

describe.skipIf(skipReason !== '')(`console in Chromium${skipReason}`, () => {
  let stack: ConsoleStack;

  beforeAll(async () => {
    stack = await startConsoleStack();
  }, 90_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('signs in, coming back to the page asked for, and shows the overview in Vietnamese with đồng and Vietnam time', async () => {
    const { context, page, seen } = await openPage(stack);
    await page.goto(consoleUrl(stack, '/messages?status=failed'));
    await page.waitForURL(/\/console\/sign-in\?next=/);
    expect(await heading(page).textContent()).toBe('Đăng nhập');

    await page.locator('input[type=email]').fill(stack.owner.email);
    await page.locator('input[type=password]').fill('not the password');
    await page.locator('form button[type=submit]').click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('invalid_credentials');

    await page.locator('input[type=password]').fill(stack.owner.password);
    await page.locator('form button[type=submit]').click();
    await page.waitForURL((url) => url.pathname === '/console/messages' && url.search === '?status=failed');
    expect(await heading(page).textContent()).toBe('Tin nhắn');

    await page.getByRole('link', { name: 'Tổng quan' }).click();
    await expect.poll(() => heading(page).textContent()).toBe('Tổng quan');
    // The demo workspace was topped up with 100,000,000 VND.
    await expect.poll(() => page.locator('.stat-balance .stat-value').textContent()).toBe('100.000.000\u00a0₫');
    expect(await page.locator('figure.chart svg[role=img]').getAttribute('aria-label')).toMatch(/^Tỷ lệ nhận tin, 7 ngày qua\. /);
    expect(await page.locator('figure.chart table tbody tr').count()).toBe(7);
    expect(await page.locator('html').getAttribute('lang')).toBe('vi');
    await screenshot(page, 'overview');
    expect(seen.problems).toEqual([]);
    expect(seen.outside).toEqual([]);
    await context.close();
  }, 60_000);

  it('creates a key shown once, sets its webhook URL, and sends a signed test report the receiver accepts', async () => {
    const { context, page, seen } = await openPage(stack, { locale: 'en-US' });
    await signIn(stack, page, stack.owner, '/api-keys');
    expect(await heading(page).textContent()).toBe('API keys');

    await page.getByLabel('Name', { exact: true }).fill('Shop website');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-api-key').textContent())!;
    expect(secret).toMatch(/^tms_live_/);

    const card = page.locator('article.key-card', { has: page.getByRole('heading', { name: /Shop website/ }) });
    const hookUrl = stack.stack.receiver.url('/shop-hook');
    await card.getByRole('button', { name: 'Set webhook URL' }).click();
    // The server's URL rules apply, and its refusal is shown where the URL was typed.
    await card.getByLabel('Webhook URL of Shop website').fill('ftp://example.com/hook');
    await card.getByRole('button', { name: 'Save webhook URL' }).click();
    await expect.poll(() => card.getByRole('alert').textContent()).toContain('invalid_webhook_url');
    await card.getByLabel('Webhook URL of Shop website').fill(hookUrl);
    await card.getByRole('button', { name: 'Save webhook URL' }).click();
    await expect.poll(() => card.getByTestId('key-webhook-url').textContent()).toBe(hookUrl);
    // The change is the server's: another read of the keys shows it.
    const keys = await stack.stack.gateway.admin('GET', `/workspaces/${stack.stack.workspaceId}/api-keys`);
    expect(keys.body.api_keys).toEqual(expect.arrayContaining([expect.objectContaining({ webhook_url: hookUrl })]));

    const before = stack.stack.receiver.hooks.length;
    await card.getByRole('button', { name: 'Send test report' }).click();
    await expect.poll(() => card.getByTestId('test-report-status').textContent(), { timeout: 15_000 }).toBe('200');
    expect(await card.getByTestId('test-report-result').textContent()).toContain('ok');
    const hook = stack.stack.receiver.hooks.slice(before).find((candidate) => candidate.path === '/shop-hook')!;
    expect(hook).toBeDefined();
    // Signed with the key that was shown once, as a real report is.
    const report = verifyHook(hook, secret);
    expect(String(report.message_id)).toMatch(/^msg_test_/);
    await screenshot(page, 'api-keys');
    expect(seen.problems).toEqual([]);
    expect(seen.outside).toEqual([]);
    await context.close();
  }, 60_000);

  it('sends one message from the template form, watches it reach delivered, and shows its report with the attempt', async () => {
    const { context, page, seen } = await openPage(stack, { locale: 'en-GB' });
    await signIn(stack, page, stack.owner, '/send');
    await page.getByLabel('Template', { exact: true }).selectOption(OTP_TEMPLATE);
    const otp = page.locator('input[name="param-otp"]');
    await otp.fill('12');
    // Checked as it is typed: the template wants 4 to 10 characters.
    await expect.poll(() => otp.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByText('At least 4 characters (now 2)').count()).toBe(1);
    await otp.fill('123456');
    await expect.poll(() => otp.getAttribute('aria-invalid')).toBe('false');
    const phone = nextPhone();
    await page.getByLabel('Phone number').fill(phone);
    await page.getByLabel('Tracking ID (optional)').fill('console-form-1');
    // The stack's key has the receiver's URL: it is offered for the report.
    expect(await page.getByLabel('Delivery reports to').inputValue()).toBe(stack.stack.key.id);
    await page.getByRole('button', { name: 'Send message' }).click();

    const link = page.getByTestId('sent-message-link');
    const messageId = (await link.textContent())!;
    expect(messageId).toMatch(/^msg_/);
    await screenshot(page, 'send');
    await link.click();
    await page.waitForURL(`**/console/messages/${messageId}`);

    // The message page follows the message to delivered (the simulator's event, the real way).
    await waitFor(
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return page.locator('.details .badge').first().getAttribute('data-status');
      },
      (status) => status === 'delivered',
      'the message to show delivered',
      30_000,
    );
    const record = await stack.stack.message(messageId);
    expect(record).toMatchObject({ status: 'delivered', source: 'console', tracking_id: 'console-form-1' });
    const timeline = await page.locator('ol.timeline li .timeline-event').allTextContents();
    expect(timeline).toEqual(['Created', 'Sent', 'Delivered']);

    await waitFor(() => hooksFor(stack.stack.receiver, messageId).length, (count) => count >= 1, 'the delivery report');
    await waitFor(
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return page.locator('article.card .badge[data-status="delivered"]').count();
      },
      (count) => count >= 1,
      'the report to show delivered',
    );
    const attempt = page.locator('article.card table').last().locator('tbody tr').first();
    expect(await attempt.locator('td').nth(2).textContent()).toBe('200');
    await screenshot(page, 'message');
    expect(seen.problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('checks a CSV with one bad row before charging, sends the rest with progress, and gives the per-row result as CSV', async () => {
    const { context, page, seen } = await openPage(stack, { locale: 'en-GB' });
    await signIn(stack, page, stack.owner, '/send');
    await page.getByLabel('Template', { exact: true }).selectOption(OTP_TEMPLATE);
    const balanceBefore = (await stack.stack.gateway.admin('GET', `/workspaces/${stack.stack.workspaceId}/wallet`)).body.balance as number;
    const phones = [nextPhone(), nextPhone()];
    // As Excel writes it in Vietnam: a BOM, semicolons, CRLF.
    const csv = `\uFEFFphone;otp;tracking_id\r\n${phones[0]};123456;csv-row-1\r\n${nextPhone()};12;csv-row-2\r\n${phones[1]};654321;csv-row-3\r\n`;
    await page.getByLabel('CSV file').setInputFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv, 'utf8') });

    await expect.poll(() => page.getByTestId('csv-valid-rows').textContent()).toBe('2');
    expect(await page.getByTestId('csv-invalid-rows').textContent()).toBe('1');
    const problems = page.getByTestId('csv-problems').locator('tbody tr');
    expect(await problems.count()).toBe(1);
    expect(await problems.first().locator('th').textContent()).toBe('2');
    // Nothing charged by the check.
    expect((await stack.stack.gateway.admin('GET', `/workspaces/${stack.stack.workspaceId}/wallet`)).body.balance).toBe(balanceBefore);
    await screenshot(page, 'send-csv-preview');

    await page.getByRole('button', { name: 'Send 2 messages' }).click();
    const results = page.getByTestId('csv-results').locator('tbody tr');
    await expect.poll(() => results.count(), { timeout: 15_000 }).toBe(3);
    expect(await page.locator('progress').getAttribute('value')).toBe('2');
    expect(await results.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-status')))).toEqual(['queued', 'invalid', 'queued']);
    expect((await stack.stack.gateway.admin('GET', `/workspaces/${stack.stack.workspaceId}/wallet`)).body.balance).toBe(balanceBefore - 2 * 250);

    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download results CSV' }).click();
    const download = await downloading;
    const text = readFileSync((await download.path())!, 'utf8');
    const lines = text.replace(/^\uFEFF/, '').trim().split('\r\n');
    expect(lines[0]).toBe('row,phone,tracking_id,status,msg_id,error');
    expect(lines).toHaveLength(4);
    const [row1, row2, row3] = lines.slice(1).map((line) => line.split(','));
    // Phones as the service normalises them (84…).
    const normalised = phones.map((phone) => `84${phone.slice(1)}`);
    expect(row1!.slice(0, 4)).toEqual(['1', normalised[0], 'csv-row-1', 'queued']);
    expect(row2!.slice(0, 4)).toEqual(['2', expect.any(String), 'csv-row-2', 'invalid']);
    expect(row2![5]).not.toBe('');
    expect(row3!.slice(0, 4)).toEqual(['3', normalised[1], 'csv-row-3', 'queued']);
    for (const row of [row1!, row3!]) {
      const record = await stack.stack.message(row[4]!);
      expect(record).toMatchObject({ source: 'console', tracking_id: row[2] });
    }
    await screenshot(page, 'send-csv-results');
    expect(seen.problems).toEqual([]);
    await context.close();
  }, 90_000);

  it("opens a delivery's exact body, headers and attempts, and redelivers it", async () => {
    const messageId = await stack.stack.send({ tracking_id: 'redeliver-me' });
    await waitFor(() => hooksFor(stack.stack.receiver, messageId).length, (count) => count >= 1, 'the delivery report');
    const { context, page, seen } = await openPage(stack, { locale: 'en-GB' });
    await signIn(stack, page, stack.owner, '/webhook-deliveries?status=delivered');
    const row = page.locator('tbody tr', { has: page.getByRole('link', { name: messageId }) });
    await row.locator('th a').click();
    await page.waitForURL(/\/console\/webhook-deliveries\/.+/);
    await expect.poll(() => page.locator('pre.code').first().textContent()).toBe(hooksFor(stack.stack.receiver, messageId)[0]!.raw.toString('utf8'));
    const headers = await page.locator('main table').nth(0).locator('tbody th').allTextContents();
    expect(headers).toEqual(expect.arrayContaining(['content-type', 'x-gateway-signature']));
    const attempts = page.locator('main table').nth(1).locator('tbody tr');
    expect(await attempts.count()).toBe(1);

    await page.getByRole('button', { name: 'Redeliver' }).click();
    await expect.poll(() => attempts.count(), { timeout: 15_000 }).toBe(2);
    await waitFor(() => hooksFor(stack.stack.receiver, messageId).length, (count) => count >= 2, 'the redelivered report');
    const [first, second] = hooksFor(stack.stack.receiver, messageId);
    expect(second!.raw.equals(first!.raw)).toBe(true);
    await screenshot(page, 'webhook-delivery');
    expect(seen.problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('follows the browser language, switches in the header, and remembers the choice', async () => {
    const english = await openPage(stack, { locale: 'en-US' });
    await english.page.goto(consoleUrl(stack, '/sign-in'));
    await expect.poll(() => heading(english.page).textContent()).toBe('Sign in');
    expect(await english.page.locator('html').getAttribute('lang')).toBe('en');
    await english.context.close();

    const other = await openPage(stack, { locale: 'fr-FR' });
    await other.page.goto(consoleUrl(stack, '/sign-in'));
    await expect.poll(() => heading(other.page).textContent()).toBe('Đăng nhập');
    await other.context.close();

    const { context, page, seen } = await openPage(stack, { locale: 'vi-VN' });
    await signIn(stack, page, stack.owner, '/wallet');
    expect(await heading(page).textContent()).toBe('Ví');
    await page.getByLabel('Ngôn ngữ').selectOption('en');
    await expect.poll(() => heading(page).textContent()).toBe('Wallet');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    // Money keeps Vietnamese grouping in English too.
    expect(await page.getByTestId('wallet-balance').textContent()).toMatch(/^[\d.]+\u00a0₫$/);
    await page.reload();
    await expect.poll(() => heading(page).textContent()).toBe('Wallet');
    await screenshot(page, 'wallet');
    await page.getByLabel('Language').selectOption('vi');
    await expect.poll(() => heading(page).textContent()).toBe('Ví');
    expect(seen.problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('does not offer a viewer what a viewer may not do', async () => {
    const viewer = await createConsoleUser(stack.stack.gateway, stack.stack.workspaceId, 'viewer');
    const { context, page, seen } = await openPage(stack, { locale: 'en-GB' });
    await signIn(stack, page, viewer, '/api-keys');
    await expect.poll(() => page.locator('article.key-card').count()).toBeGreaterThan(0);
    expect(await page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Revoke' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Send test report' }).count()).toBe(0);
    expect(await page.getByText('Your role can see keys but not create or change them.').count()).toBe(1);
    expect(await page.getByRole('navigation').getByRole('link', { name: 'Activity' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Send', exact: true }).click();
    await expect.poll(() => page.getByText('Your role can read but not send.', { exact: false }).count()).toBe(1);
    expect(await page.locator('input[type=file]').count()).toBe(0);
    expect(seen.problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('signs out, and sign-out everywhere ends the other sessions too', async () => {
    const first = await openPage(stack, { locale: 'en-GB' });
    const second = await openPage(stack, { locale: 'en-GB' });
    const user = await createConsoleUser(stack.stack.gateway, stack.stack.workspaceId, 'developer');
    await signIn(stack, first.page, user, '/');
    await signIn(stack, second.page, user, '/');
    await first.page.locator('.account-button').click();
    await first.page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await first.page.waitForURL(/\/console\/sign-in/);
    await second.page.getByRole('link', { name: 'Messages', exact: true }).click();
    await second.page.waitForURL(/\/console\/sign-in\?next=%2Fmessages/);
    await first.context.close();
    await second.context.close();
  }, 60_000);

  it("shows a sender account's RSA public key to copy and to download as PEM, with today's quota", async () => {
    const pem = stack.stack.simulator.control.rsaPublicKey(DEMO_SENDER_ACCOUNT.oa_id)!.pem;
    const oaId = `rsa${Date.now()}`;
    const connected = await stack.stack.gateway.admin('PUT', `/workspaces/${stack.stack.workspaceId}/sender-accounts/${oaId}?verify=false`, {
      name: 'Cửa hàng RSA',
      daily_quota: 1234,
      app_id: `app${oaId}`,
      app_secret: 'app-secret',
      refresh_token: 'refresh-token',
      rsa_public_key: pem,
    });
    expect(connected.status).toBeLessThan(300);
    const { context, page, seen } = await openPage(stack, { locale: 'en-GB' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
    await signIn(stack, page, stack.owner, '/sender-accounts');
    const card = page.locator('article.card', { has: page.getByRole('heading', { name: /Cửa hàng RSA/ }) });
    expect((await card.locator('pre.code').textContent())!.trim()).toBe(pem.trim());
    expect(await card.textContent()).toContain('1,234');

    await card.getByRole('button', { name: 'Copy key' }).click();
    await expect.poll(() => card.getByRole('status').textContent()).toBe('Copied');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(pem);

    const downloading = page.waitForEvent('download');
    await card.getByRole('button', { name: 'Download PEM' }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe(`${oaId}-public-key.pem`);
    expect(readFileSync((await download.path())!, 'utf8')).toBe(pem);
    await screenshot(page, 'sender-accounts');
    expect(seen.problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('passes axe-core (no serious or critical violation) on every page', async () => {
    const messageId = await stack.stack.send({ tracking_id: 'axe-page' });
    await waitFor(() => hooksFor(stack.stack.receiver, messageId).length, (count) => count >= 1, 'the delivery report');
    // A failure too, so the overview and a message page show an error with its Vietnamese reason.
    stack.stack.simulator.control.setRecipientRules([{ suffix: '0999', result: 'error', error: -118 }]);
    const failedId = await stack.stack.send({ tracking_id: 'axe-failure', phone: '0912340999' });
    await waitFor(async () => (await stack.stack.message(failedId)).status, (status) => status === 'failed', 'the failure');
    stack.stack.simulator.control.setRecipientRules([]);
    const deliveries = await (async () => {
      const { page, context } = await openPage(stack);
      await signIn(stack, page, stack.owner, '/webhook-deliveries');
      const href = await page.locator('main tbody th a').first().getAttribute('href');
      await context.close();
      return href!;
    })();

    const failures: string[] = [];
    const signedOut = await openPage(stack);
    await signedOut.page.goto(consoleUrl(stack, '/sign-in'));
    await expect.poll(() => heading(signedOut.page).textContent()).toBe('Đăng nhập');
    failures.push(...(await seriousViolations(signedOut.page)).map((violation) => `/sign-in: ${violation}`));
    await screenshot(signedOut.page, 'sign-in');
    const invitation = await stack.stack.gateway.admin('POST', `/workspaces/${stack.stack.workspaceId}/users`, { email: `axe-${Date.now()}@example.vn`, role: 'viewer' });
    expect(invitation.status).toBe(201);
    await signedOut.page.goto(invitation.body.invitation_url.replace(/^https?:\/\/[^/]+/, stack.origin));
    await expect.poll(() => signedOut.page.locator('input[autocomplete=new-password]').count()).toBe(2);
    failures.push(...(await seriousViolations(signedOut.page)).map((violation) => `/invitations: ${violation}`));
    await signedOut.context.close();

    const { context, page, seen } = await openPage(stack);
    await signIn(stack, page, stack.owner, '/');
    const pages: [string, string][] = [
      ['/', 'overview'],
      ['/messages', 'messages'],
      [`/messages/${messageId}`, 'message'],
      [`/messages/${failedId}`, 'message-failed'],
      ['/send', 'send'],
      ['/templates', 'templates'],
      ['/sender-accounts', 'sender-accounts'],
      ['/api-keys', 'api-keys'],
      ['/webhook-deliveries', 'webhook-deliveries'],
      [deliveries.replace(/^\/console/, ''), 'webhook-delivery'],
      ['/wallet', 'wallet'],
      ['/team', 'team'],
      ['/activity', 'activity'],
    ];
    for (const [path, name] of pages) {
      await page.goto(consoleUrl(stack, path));
      await expect.poll(() => page.locator('main h1').count()).toBe(1);
      // Wait for the page's reads to settle.
      await expect.poll(() => page.locator('.loading').count()).toBe(0);
      failures.push(...(await seriousViolations(page)).map((violation) => `${path}: ${violation}`));
      if (['overview', 'messages', 'message-failed', 'templates', 'webhook-deliveries', 'team', 'activity'].includes(name)) {
        await screenshot(page, name);
      }
    }
    expect(failures).toEqual([]);
    expect(seen.problems).toEqual([]);
    expect(seen.outside).toEqual([]);
    await context.close();
  }, 120_000);
});
