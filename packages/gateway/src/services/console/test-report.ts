/**
 * "Send a test report": a sample delivery report, built and signed exactly like a real one (the
 * same body builder, the same headers and signature with the key's secret), POSTed once to the
 * key's webhook URL through the same transport, time limit and URL rules. Nothing is stored: it is
 * not a delivery, is not retried and charges nothing. The receiver's answer is shown as it came.
 */
import { decryptSecret } from '../../lib/crypto.ts';
import { createSortableId } from '../../lib/ids.ts';
import { ATTEMPT_HEADER, deliveryReportHeaders } from '../../lib/webhook-signature.ts';
import { WebhookTransport } from '../../lib/webhook-transport.ts';
import { deliveryReportBody } from '../../infrastructure/delivery-event-writer.ts';
import { listSenderAccounts } from '../../store/sender-accounts.ts';
import { requireManagedApiKey } from '../admin/api-keys.ts';
import { requireMasterKeyRing } from '../master-keys.ts';
import type { ConsoleUserCaller, VerbCall } from '../context.ts';
import { badRequest } from '../errors.ts';

/** The most of the receiver's answer shown back. */
export const TEST_REPORT_ANSWER_BYTES = 2048;
/** A sample recipient: the number the API reference uses in its examples. */
const SAMPLE_PHONE = '84912345678';
/** Used when the workspace has no sender account yet, so the report still has a `from`. */
const SAMPLE_OA_ID = '0000000000000000000';

export interface TestReportResult {
  url: string;
  statusCode: number | null;
  latencyMs: number;
  /** The start of the receiver's answer (at most TEST_REPORT_ANSWER_BYTES), empty when none came. */
  responseBody: string;
  error: string | null;
  /** The exact body posted. */
  requestBody: string;
}

export async function sendTestReport({ ctx, input }: VerbCall<ConsoleUserCaller, { id: string }>): Promise<TestReportResult> {
  const key = await requireManagedApiKey(ctx, input.id);
  if (key.revoked_at !== null) throw badRequest(`API key ${key.id} is revoked: it sends no reports`);
  if (!key.webhook_url) throw badRequest(`API key ${key.id} has no webhook URL: set one first`);
  const now = ctx.clock();
  const [senderAccount] = await listSenderAccounts(ctx.store.db, key.workspace_id);
  const messageId = createSortableId('msg_test', now);
  const body = deliveryReportBody(
    {
      id: messageId,
      workspace_id: key.workspace_id,
      api_key_id: key.id,
      tracking_id: 'test-report',
      oa_id: senderAccount?.oa_id ?? SAMPLE_OA_ID,
      phone: SAMPLE_PHONE,
      provider_msg_id: `test_${messageId.slice('msg_test_'.length)}`,
      delivered_at: now,
    },
    now,
    `test_${messageId.slice('msg_test_'.length)}`,
  );
  const bytes = Buffer.from(body, 'utf8');
  const headers = {
    ...deliveryReportHeaders({ body: bytes, signingKey: decryptSecret(key.encrypted_key, requireMasterKeyRing(ctx)), deliveryId: createSortableId('dlv_test', now) }),
    [ATTEMPT_HEADER]: '1',
  };
  const { webhooks, allowPrivateWebhookTargets } = ctx.parts.config;
  // A transport of its own, closed after: test reports are rare, and the sender's pools belong to the worker.
  const transport = new WebhookTransport({ timeoutMs: webhooks.timeoutMs, connectionsPerReceiver: 1, allowPrivateTargets: allowPrivateWebhookTargets });
  try {
    const answer = await transport.post({ url: key.webhook_url, body: bytes, headers, keepAnswerBytes: TEST_REPORT_ANSWER_BYTES });
    return { url: key.webhook_url, statusCode: answer.statusCode, latencyMs: answer.latencyMs, responseBody: answer.answerBody ?? '', error: answer.error, requestBody: body };
  } finally {
    await transport.close();
  }
}
