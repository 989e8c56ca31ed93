/** The console's first page: what a workspace's people check every morning. */
import { VIETNAM_OFFSET_MS, vietnamDay } from '../../lib/vietnam-time.ts';
import { listLatestFailures, type CountWindow } from '../../store/console-overview.ts';
import type { MessageRow, MessageStatus } from '../../store/schema.ts';
import { findWorkspace } from '../../store/workspaces.ts';
import { readQuota, type QuotaToday } from '../catalog.ts';
import type { ConsoleUserCaller, VerbCall } from '../context.ts';
import { ApiError } from '../errors.ts';

const DAY_MS = 86_400_000;
/** Days in the delivery-rate chart, today included. */
export const DELIVERY_RATE_DAYS = 7;
const LATEST_FAILURES = 10;

export type StatusCounts = Record<MessageStatus, number>;

/** One Vietnam day's outcomes, counted over the messages created that day. */
export interface DeliveryDay {
  /** YYYY-MM-DD, Vietnam time. */
  day: string;
  /** Handed to the platform, no delivery report yet. */
  sent: number;
  delivered: number;
  failed: number;
  /** delivered / (delivered + failed): the share of known outcomes that reached the phone; null before any. */
  rate: number | null;
}

export interface Overview {
  balance: number;
  messagesToday: StatusCounts;
  /** Oldest day first, today last. */
  deliveryRate: DeliveryDay[];
  quotas: QuotaToday[];
  latestFailures: MessageRow[];
}

function emptyCounts(): StatusCounts {
  return { queued: 0, sending: 0, sent: 0, delivered: 0, failed: 0 };
}

/** Days since the epoch in Vietnam time. */
function vietnamDayNumber(epochMs: number): number {
  return Math.floor((epochMs + VIETNAM_OFFSET_MS) / DAY_MS);
}

/** The instant a Vietnam day (days since the epoch) starts. */
function startOfVietnamDay(dayNumber: number): number {
  return dayNumber * DAY_MS - VIETNAM_OFFSET_MS;
}

/** Statuses counted for every day of the chart; the others (queued, sending) only for today. */
const OUTCOME_STATUSES = ['sent', 'delivered', 'failed'] as const satisfies readonly MessageStatus[];
const IN_PROGRESS_STATUSES = ['queued', 'sending'] as const satisfies readonly MessageStatus[];

function deliveryDay(dayNumber: number, counts: StatusCounts): DeliveryDay {
  const known = counts.delivered + counts.failed;
  return {
    day: vietnamDay(dayNumber * DAY_MS),
    sent: counts.sent,
    delivered: counts.delivered,
    failed: counts.failed,
    rate: known === 0 ? null : counts.delivered / known,
  };
}

/**
 * Balance, today's messages by status, the last seven Vietnam days' delivery outcomes, each
 * sender account's quota today and the ten newest failures. Days are counted by when a message
 * was created, so a day's figures only move as its messages reach their outcome. A busy
 * workspace's counts may be a few seconds old (caches/message-counts.ts).
 */
export async function readOverview({ ctx }: VerbCall<ConsoleUserCaller, Record<string, never>>): Promise<Overview> {
  const { workspaceId } = ctx.caller;
  const now = ctx.clock();
  const today = vietnamDayNumber(now);
  const firstDay = today - (DELIVERY_RATE_DAYS - 1);
  const workspace = await findWorkspace(ctx.store.db, workspaceId);
  if (!workspace) throw new ApiError('workspace_not_found', `workspace ${workspaceId} not found`);
  const windows: (CountWindow & { dayNumber: number })[] = [];
  for (let dayNumber = firstDay; dayNumber <= today; dayNumber += 1) {
    const statuses = dayNumber === today ? [...IN_PROGRESS_STATUSES, ...OUTCOME_STATUSES] : OUTCOME_STATUSES;
    for (const status of statuses) windows.push({ dayNumber, status, from: startOfVietnamDay(dayNumber), to: startOfVietnamDay(dayNumber + 1) });
  }
  const counts = await ctx.parts.messageCounts.count(workspaceId, windows);
  const byDay = new Map<number, StatusCounts>();
  for (let dayNumber = firstDay; dayNumber <= today; dayNumber += 1) byDay.set(dayNumber, emptyCounts());
  windows.forEach((window, index) => {
    byDay.get(window.dayNumber)![window.status] = counts[index]!;
  });
  const quotas = await readQuota({ ctx, input: {} });
  const latestFailures = await listLatestFailures(ctx.store.db, workspaceId, LATEST_FAILURES);
  return {
    balance: workspace.balance,
    messagesToday: byDay.get(today) ?? emptyCounts(),
    deliveryRate: [...byDay.entries()].map(([dayNumber, dayCounts]) => deliveryDay(dayNumber, dayCounts)),
    quotas,
    latestFailures,
  };
}
