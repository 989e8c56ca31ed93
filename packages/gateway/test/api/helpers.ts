/**
 * Small helpers shared by the /api/v1 suites. Everything goes through the real HTTP API; the only
 * direct store access is test setup that the public API cannot express (moving a message out of
 * `queued`, back-dating created_at) and reading columns the API does not expose (send mode).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { ERROR_CATALOGUE, type ErrorType } from '../../src/services/errors.ts';
import { VALID_DATA, type SeededWorkspace, type TestGateway, type TestResponse } from '../harness.ts';

export const VIETNAM_OFFSET_MS = 7 * 60 * 60 * 1000;
export const DAY_MS = 24 * 60 * 60 * 1000;

/** ISO 8601 UTC with milliseconds, the response format of docs/api.md. */
export const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The error body of docs/api.md with this catalogued type: the type's status as the HTTP status and
 * as `code`, a non-empty message, a request id on the response. Tests branch on the type like
 * callers do; `message` is checked only where its wording is itself the behaviour.
 */
export function expectError(response: TestResponse, type: ErrorType, message?: RegExp): void {
  const status = ERROR_CATALOGUE[type].status;
  expect(response.status, response.text).toBe(status);
  expect(response.body, response.text).toEqual({ error: { code: status, type, message: expect.any(String) } });
  expect(response.body.error.message.trim()).not.toBe('');
  if (message) expect(response.body.error.message).toMatch(message);
  expect(response.headers.get('x-request-id')).toMatch(/\S/);
}

/** A 2xx (or other expected) status, with the body in the failure message. */
export function expectStatus(response: TestResponse, status: number): void {
  expect(response.status, response.text).toBe(status);
  expect(response.headers.get('x-request-id')).toMatch(/\S/);
}

export interface Wallet {
  workspace_id: string;
  balance: number;
  ledger: { id: string; kind: string; amount: number; balance_after: number; message_count: number; reference: string | null; note: string | null; created_at: string }[];
  count: number;
}

export async function walletOf(gateway: TestGateway, workspaceId: string): Promise<Wallet> {
  const response = await gateway.admin('GET', `/workspaces/${workspaceId}/wallet?limit=500`);
  expect(response.status, response.text).toBe(200);
  return response.body as Wallet;
}

export async function workspaceOf(gateway: TestGateway, workspaceId: string) {
  const response = await gateway.admin('GET', `/workspaces/${workspaceId}`);
  expect(response.status, response.text).toBe(200);
  return response.body as { id: string; status: string; balance: number; message_cap: number | null; messages_used: number };
}

/** Every message the workspace can see through the public list (up to 200). */
export async function listAll(gateway: TestGateway, workspace: SeededWorkspace, query = ''): Promise<any[]> {
  const response = await gateway.request('GET', `/api/v1/messages?limit=200${query ? `&${query}` : ''}`, { key: workspace.apiKey });
  expect(response.status, response.text).toBe(200);
  return response.body.messages as any[];
}

export async function sendOne(gateway: TestGateway, workspace: SeededWorkspace, extra: Record<string, unknown> = {}): Promise<TestResponse> {
  return gateway.request('POST', '/api/v1/messages/send', {
    key: workspace.apiKey,
    body: { template_id: workspace.templateId, phone: '0912345678', template_data: VALID_DATA, ...extra },
  });
}

/** Sends one message and returns its msg_id (fails the test if it is not queued). */
export async function queueOne(gateway: TestGateway, workspace: SeededWorkspace, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await sendOne(gateway, workspace, extra);
  expect(response.status, response.text).toBe(202);
  return response.body.msg_id as string;
}

/** Registers (or updates) a template in a workspace through the operator API. */
export async function putTemplate(
  gateway: TestGateway,
  workspaceId: string,
  templateId: string,
  fields: { oa_id: string; status?: string; price?: number; name?: string; params?: unknown[]; preview_url?: string; template_type?: number },
): Promise<TestResponse> {
  const response = await gateway.admin('PUT', `/workspaces/${workspaceId}/templates/${templateId}?verify=false`, {
    name: fields.name ?? 'Extra template',
    status: fields.status ?? 'ENABLE',
    template_type: fields.template_type ?? 1,
    oa_id: fields.oa_id,
    preview_url: fields.preview_url ?? 'https://example.com/extra',
    price: fields.price ?? 300,
    params: fields.params ?? [{ name: 'name', type: 'STRING', required: true, max_length: 30, min_length: 1 }],
  });
  expect(response.status, response.text).toBe(200);
  return response;
}

/** Connects (or updates) a sender account in a workspace through the operator API. */
export async function putSenderAccount(
  gateway: TestGateway,
  workspaceId: string,
  oaId: string,
  fields: { name?: string; daily_quota?: number; default_mode?: 'plain' | 'hashphone' } = {},
): Promise<TestResponse> {
  const response = await gateway.admin('PUT', `/workspaces/${workspaceId}/sender-accounts/${oaId}?verify=false`, {
    name: fields.name ?? `OA ${oaId}`,
    daily_quota: fields.daily_quota ?? 100_000,
    app_id: `app-${oaId}`,
    app_secret: 'app-secret',
    refresh_token: 'refresh-token',
    ...(fields.default_mode ? { default_mode: fields.default_mode } : {}),
  });
  expect(response.status, response.text).toBe(200);
  return response;
}

/** A key of the workspace with exactly these scopes. */
export async function createKey(gateway: TestGateway, workspaceId: string, scopes: string[], extra: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
  const response = await gateway.admin('POST', `/workspaces/${workspaceId}/api-keys`, { scopes, ...extra });
  expect(response.status, response.text).toBe(201);
  return { id: response.body.id as string, key: response.body.key as string };
}

/** Standard base64 of n random bytes: a stand-in RSA ciphertext of the right length. */
export function rsaCiphertext(bytes = 256): string {
  return randomBytes(bytes).toString('base64');
}

/** A unique id-safe suffix for names made inside a test. */
export function unique(prefix: string): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** Wall-clock Vietnam time without an offset, e.g. 2026-11-21T15:00:00 (seconds precision). */
export function vietnamWallClock(epochMs: number): string {
  return new Date(epochMs + VIETNAM_OFFSET_MS).toISOString().slice(0, 19);
}

/** Next midnight in Vietnam after an instant, written as the quota's reset_at. */
export function nextVietnamMidnightText(epochMs: number): string {
  const day = new Date(epochMs + VIETNAM_OFFSET_MS + DAY_MS).toISOString().slice(0, 10);
  return `${day}T00:00:00.000+07:00`;
}

/** Moves a message to a state by writing its row: setup the public API cannot do without the platform. */
export async function setMessageStatus(gateway: TestGateway, msgId: string, status: 'queued' | 'sending' | 'sent' | 'delivered' | 'failed'): Promise<void> {
  const result = await gateway.runtime.store.db.updateTable('message_states').set({ status }).where('id', '=', msgId).executeTakeFirst();
  expect(Number(result.numUpdatedRows)).toBe(1);
}

/** Test setup: back-dates a message, in its row and in its state's copy of the time. */
export async function setMessageCreatedAt(gateway: TestGateway, msgId: string, createdAt: number): Promise<void> {
  for (const table of ['messages', 'message_states'] as const) {
    const result = await gateway.runtime.store.db.updateTable(table).set({ created_at: createdAt }).where('id', '=', msgId).executeTakeFirst();
    expect(Number(result.numUpdatedRows)).toBe(1);
  }
}
