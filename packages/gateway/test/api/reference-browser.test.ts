/**
 * The reference pages in a real browser (Debian's Chromium driven by playwright-core): Redoc
 * renders /docs and, after the operator token is typed in, /admin/docs, with nothing refused by
 * the Content-Security-Policy, no console error and no request leaving the gateway.
 *
 * Skipped on a machine without /usr/bin/chromium; in CI (CI=true) its absence is a failure, and
 * .ci/run installs it.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.CI === 'true';
const skipReason = hasChromium || required ? '' : ` (skipped: ${CHROMIUM} is absent; apt-get install chromium to run it)`;

interface PageWatch {
  /** Console errors and warnings, page errors and CSP violations, as text. */
  problems: string[];
  /** Requests to anything but the gateway (blob: workers are the page's own). */
  outside: string[];
}

function watch(page: Page, origin: string): PageWatch {
  const seen: PageWatch = { problems: [], outside: [] };
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') seen.problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => seen.problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('blob:')) seen.outside.push(url);
  });
  return seen;
}

describe.skipIf(skipReason !== '')(`reference pages in Chromium${skipReason}`, () => {
  let gateway: TestGateway;
  let browser: Browser;

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`CI needs Chromium at ${CHROMIUM} for the reference-page test (.ci/run installs it with apt-get)`);
    gateway = await startTestGateway('sqlite');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('renders /docs: the send operation with its examples and the webhook, under the policy', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const seen = watch(page, gateway.url);
    await page.goto(`${gateway.url}/docs#tag/Messages/operation/sendMessage`);
    await expect.poll(() => page.getByRole('heading', { name: 'Send one template message' }).isVisible(), { timeout: 20_000 }).toBe(true);
    const text = await page.locator('body').innerText();
    expect(text).toContain('Request samples');
    expect(text).toContain('Nguyễn Văn An');
    expect(text).toContain('Delivery report, POSTed to your webhook URL');
    expect(seen.problems).toEqual([]);
    expect(seen.outside).toEqual([]);
    await page.close();
  }, 60_000);

  it('renders /admin/docs only with the operator token, typed into its form', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const seen = watch(page, gateway.url);
    await page.goto(`${gateway.url}/admin/docs`);
    await page.fill('#operator-token', 'not-the-operator-token');
    await page.click('#token-form button[type=submit]');
    await expect.poll(() => page.locator('#token-status').innerText(), { timeout: 10_000 }).toMatch(/^401: /);
    // The browser logs the refused fetch itself: the one console error expected here.
    const refused = seen.problems.filter((problem) => /status of 401/.test(problem));
    expect(refused).toHaveLength(1);
    seen.problems = seen.problems.filter((problem) => !refused.includes(problem));

    await page.fill('#operator-token', gateway.config.adminToken!);
    await page.click('#token-form button[type=submit]');
    await expect.poll(() => page.getByRole('heading', { name: 'Top up the wallet (VND)' }).count(), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await page.locator('#token-form').isHidden()).toBe(true);
    expect(await page.locator('#operator-token').inputValue()).toBe('');
    expect(seen.problems).toEqual([]);
    expect(seen.outside).toEqual([]);
    await page.close();
  }, 60_000);
});
