import { Gauge, type Registry } from 'prom-client';
import type { Store } from '../store/database.ts';
import { SENDER_ACCOUNT_STATUSES, countSenderAccountsByStatus, listActiveWalletBalances } from '../store/account-stats.ts';

/**
 * Store-wide gauges about customers' accounts, read at scrape time: each workspace's sender
 * accounts by token status (one needing a new refresh token sends nothing until the operator
 * reconnects it) and each active workspace's wallet balance. A few series per workspace: bounded
 * by the number of customers, and named by workspace so an alert says whom to act for.
 */
export function registerAccountGauges(registry: Registry, store: Store): void {
  new Gauge({
    name: 'tms_sender_accounts',
    help: 'Sender accounts (ZNS official accounts) per workspace by status: connected, disconnected or relogin_required (needs a new refresh token)',
    labelNames: ['workspace_id', 'status'],
    registers: [registry],
    async collect() {
      const counts = await countSenderAccountsByStatus(store.db);
      this.reset();
      // Every status of a workspace that has accounts, 0 included, so "none left connected" can be told apart from "no data".
      for (const workspaceId of new Set(counts.map((entry) => entry.workspaceId))) {
        for (const status of SENDER_ACCOUNT_STATUSES) this.set({ workspace_id: workspaceId, status }, 0);
      }
      for (const { workspaceId, status, count } of counts) this.set({ workspace_id: workspaceId, status }, count);
    },
  });
  new Gauge({
    name: 'tms_wallet_balance_vnd',
    help: 'Wallet balance in VND of each active workspace (suspended and demo workspaces are left out)',
    labelNames: ['workspace_id'],
    registers: [registry],
    async collect() {
      const balances = await listActiveWalletBalances(store.db);
      // A workspace suspended or deleted since the last scrape must leave the exposition.
      this.reset();
      for (const { workspaceId, balance } of balances) this.set({ workspace_id: workspaceId }, balance);
    },
  });
}
