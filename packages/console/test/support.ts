/**
 * Shared by the console's browser tests: Debian's Chromium driven by playwright-core against the
 * real gateway (API, workers, the built console) and the ZNS simulator, with a real webhook
 * receiver (packages/gateway/test/webhooks/support.ts). Nothing is mocked: pages talk to
 * /console/api, messages reach `delivered` through the simulator, reports reach the receiver.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { createConsoleUser, type ConsoleCredentials } from '../../gateway/test/console-support.ts';
import { STORE_KINDS } from '../../gateway/test/harness.ts';
import { startWebhookStack, type WebhookStack } from '../../gateway/test/webhooks/support.ts';

export const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.CI === 'true';
/** '' when the browser tests run; otherwise why they are skipped (never in CI: there a missing browser fails). */
export const skipReason = hasChromium || required ? '' : ` (skipped: ${CHROMIUM} is absent; apt-get install chromium to run them)`;

const DIST_INDEX = fileURLToPath(new URL('../dist/index.html', import.meta.url));
const SCREENSHOTS = fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url));
const takeScreenshots = process.env.TMS_SCREENSHOTS === '1';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface ConsoleStack {
  stack: WebhookStack;
  browser: Browser;
  /** http://127.0.0.1:port */
  origin: string;
  owner: ConsoleCredentials;
  close(): Promise<void>;
}

/** The last store kind: PostgreSQL when TMS_TEST_DATABASE_URL is set (as in CI), else SQLite. */
export const STORE_KIND = STORE_KINDS[STORE_KINDS.length - 1]!;

export async function startConsoleStack(): Promise<ConsoleStack> {
  if (!hasChromium) throw new Error(`CI needs Chromium at ${CHROMIUM} for the console's browser tests (.ci/run installs it with apt-get)`);
  if (!existsSync(DIST_INDEX)) throw new Error('the console is not built: run `npm run build -w @tms/console` (npm install does it)');
  const stack = await startWebhookStack(STORE_KIND);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const owner = await createConsoleUser(stack.gateway, stack.workspaceId, 'owner');
  return {
    stack,
    browser,
    origin: stack.gateway.url,
    owner,
    close: async () => {
      await browser.close();
      await stack.close();
    },
  };
}

export interface PageWatch {
  /** Page errors and CSP refusals: none may happen. */
  problems: string[];
  /** Requests to anything but the gateway. */
  outside: string[];
}

export interface OpenPage {
  context: BrowserContext;
  page: Page;
  seen: PageWatch;
}

/** A fresh browser profile (no cookies, no stored language) in the given language. */
export async function openPage(stack: ConsoleStack, options: { locale?: string } = {}): Promise<OpenPage> {
  const context = await stack.browser.newContext({
    viewport: { width: 1360, height: 900 },
    locale: options.locale ?? 'vi-VN',
    timezoneId: 'Europe/Paris',
    acceptDownloads: true,
  });
  const page = await context.newPage();
  const seen: PageWatch = { problems: [], outside: [] };
  page.on('pageerror', (error) => seen.problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A refused request is logged by the browser itself (e.g. the 401 of the first session probe); those are expected.
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) seen.problems.push(`console error: ${message.text()}`);
  });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(stack.origin) && !url.startsWith('blob:') && !url.startsWith('data:')) seen.outside.push(url);
  });
  return { context, page, seen };
}

export function consoleUrl(stack: ConsoleStack, path: string): string {
  return `${stack.origin}/console${path}`;
}

/** Signs in through the sign-in form and waits for the page it leads to. */
export async function signIn(stack: ConsoleStack, page: Page, credentials: { email: string; password: string }, path = '/'): Promise<void> {
  await page.goto(consoleUrl(stack, path));
  await page.waitForURL(/\/console\/sign-in/);
  await page.locator('input[type=email]').fill(credentials.email);
  await page.locator('input[type=password]').fill(credentials.password);
  await page.locator('form button[type=submit]').click();
  await page.waitForURL((url) => !url.pathname.startsWith('/console/sign-in'));
  await expect.poll(() => page.locator('header .account-email').textContent()).toBe(credentials.email);
}

/** Runs axe-core on the page as it is; returns the serious and critical violations, described. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // The CSP forbids inline scripts: evaluating the source through the protocol is not subject to it.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.map((node) => JSON.stringify(node.target)) }));
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.impact} ${violation.id}: ${violation.help} at ${violation.targets.join(', ')}`);
}

/** docs/screenshots/<name>.png, only with TMS_SCREENSHOTS=1 (so ordinary runs leave the tree alone). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!takeScreenshots) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
}

export function heading(page: Page) {
  return page.locator('main h1');
}
