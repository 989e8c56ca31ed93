import type { Static } from 'typebox';
import { formatUtc } from '../../lib/vietnam-time.ts';
import type { QuotaToday } from '../../services/catalog.ts';
import type { SenderAccountRow } from '../../services/vocabulary.ts';
import type { ConsoleSenderAccountSchema, QuotaViewSchema } from '../routes/console/sender-accounts.ts';

/** A sender account's quota today as the console shows it (its reset time in UTC, like every console time). */
export function presentQuotaView(quota: QuotaToday): Static<typeof QuotaViewSchema> {
  return {
    oa_id: quota.oaId,
    name: quota.oaName,
    daily_quota: quota.dailyQuota,
    used: quota.used,
    remaining: quota.remaining,
    resets_at: formatUtc(quota.resetAt),
  };
}

/** A sender account with its RSA public key and today's quota; none of its secrets. */
function presentConsoleSenderAccount(account: SenderAccountRow, quota: QuotaToday): Static<typeof ConsoleSenderAccountSchema> {
  return {
    oa_id: account.oa_id,
    name: account.name,
    status: account.status,
    default_mode: account.default_mode,
    rsa_public_key: account.rsa_public_key,
    quota: presentQuotaView(quota),
  };
}

/**
 * The accounts with their quotas, read a moment apart: an account connected in between has no
 * quota yet and is left for the next read.
 */
export function presentConsoleSenderAccounts(accounts: readonly SenderAccountRow[], quotas: readonly QuotaToday[]) {
  const quotaOf = new Map(quotas.map((quota) => [quota.oaId, quota]));
  return {
    sender_accounts: accounts.flatMap((account) => {
      const quota = quotaOf.get(account.oa_id);
      return quota ? [presentConsoleSenderAccount(account, quota)] : [];
    }),
  };
}
