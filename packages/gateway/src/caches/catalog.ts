import type { Store } from '../store/database.ts';
import type { SenderAccountRow, TemplateRow } from '../store/schema.ts';
import { findSenderAccount } from '../store/sender-accounts.ts';
import { findTemplate } from '../store/templates.ts';
import { TtlCache } from '../lib/ttl-cache.ts';

/**
 * Templates and sender accounts read on every send, cached briefly. Changes made through this
 * process invalidate at once; changes made by another process show within the TTL, and the
 * dispatcher checks the template again before sending.
 */
export class Catalog {
  private readonly templates: TtlCache<TemplateRow | null>;
  private readonly senderAccounts: TtlCache<SenderAccountRow | null>;

  constructor(
    private readonly store: Store,
    ttlMs: number,
    clock: () => number,
  ) {
    this.templates = new TtlCache(ttlMs, 10_000, clock);
    this.senderAccounts = new TtlCache(ttlMs, 10_000, clock);
  }

  async template(workspaceId: string, templateId: string): Promise<TemplateRow | null> {
    return this.templates.getOrLoad(`${workspaceId}/${templateId}`, async () => (await findTemplate(this.store.db, workspaceId, templateId)) ?? null);
  }

  async senderAccount(workspaceId: string, oaId: string): Promise<SenderAccountRow | null> {
    return this.senderAccounts.getOrLoad(`${workspaceId}/${oaId}`, async () => (await findSenderAccount(this.store.db, workspaceId, oaId)) ?? null);
  }

  forgetTemplate(workspaceId: string, templateId: string): void {
    this.templates.delete(`${workspaceId}/${templateId}`);
  }

  forgetSenderAccount(workspaceId: string, oaId: string): void {
    this.senderAccounts.delete(`${workspaceId}/${oaId}`);
  }
}
