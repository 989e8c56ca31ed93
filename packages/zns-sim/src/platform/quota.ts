/** The daily send quota of each OA, counted per Vietnam day (UTC+7): GET /message/quota and its control-API view. */
import { ControlError } from '../control-error.ts';
import { isJsonObject } from '../json-object.ts';
import type { OaState } from './accounts.ts';
import { accountOr404, stateChanged, type Platform } from './platform-state.ts';

const VIETNAM_OFFSET_MS = 7 * 3600 * 1000;
const DAY_MS = 86_400_000;
const QUOTA_FIELDS = ['daily_quota', 'remaining_quota', 'used_today'];

export interface QuotaView {
  oa_id: string;
  daily_quota: number;
  used_today: number;
  remaining_quota: number;
  vietnam_day: string;
}

/** Days since the epoch at UTC+7. */
export function vietnamDay(nowMs: number): number {
  return Math.floor((nowMs + VIETNAM_OFFSET_MS) / DAY_MS);
}

function vietnamDayString(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** Starts a fresh count when the Vietnam day has turned since the last send. */
export function rollQuotaDay(oa: OaState, now: number): void {
  const day = vietnamDay(now);
  if (day !== oa.quotaDay) {
    oa.quotaDay = day;
    oa.usedToday = 0;
  }
}

export function setDailyQuota(oa: OaState, dailyQuota: number): void {
  oa.daily_quota = dailyQuota;
  oa.dailyQuotaText = String(dailyQuota);
}

export function remainingQuota(oa: OaState): number {
  return Math.max(0, oa.daily_quota - oa.usedToday);
}

/** GET /message/quota. */
export function quotaBody(platform: Platform, oa: OaState): { error: 0; message: string; data: Record<string, string | number | null> } {
  rollQuotaDay(oa, platform.now());
  const promotion = oa.promotionQuota;
  return {
    error: 0,
    message: 'success',
    data: {
      dailyQuota: oa.dailyQuotaText,
      remainingQuota: String(remainingQuota(oa)),
      dailyQuotaPromotion: promotion ? String(promotion.daily_quota) : null,
      remainingQuotaPromotion: promotion ? String(promotion.daily_quota) : null,
      monthlyPromotionQuota: promotion ? promotion.monthly_quota : null,
      remainingMonthlyPromotionQuota: promotion ? promotion.monthly_quota : null,
      estimatedNextMonthPromotionQuota: promotion ? (promotion.estimated_next_month ?? promotion.monthly_quota) : null,
    },
  };
}

export function quotaView(platform: Platform, oa: OaState): QuotaView {
  rollQuotaDay(oa, platform.now());
  return {
    oa_id: oa.oa_id,
    daily_quota: oa.daily_quota,
    used_today: oa.usedToday,
    remaining_quota: remainingQuota(oa),
    vietnam_day: vietnamDayString(oa.quotaDay),
  };
}

/** `daily_quota` changes the tier; `remaining_quota` or `used_today` set today's usage. */
export function setQuota(platform: Platform, oaId: string, patch: unknown): QuotaView {
  const oa = accountOr404(platform, oaId);
  if (!isJsonObject(patch)) throw new ControlError(400, 'body must be a JSON object');
  const dailyQuota = patch.daily_quota;
  const remaining = patch.remaining_quota;
  const usedToday = patch.used_today;
  for (const [field, value] of [['daily_quota', dailyQuota], ['remaining_quota', remaining], ['used_today', usedToday]] as const) {
    if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < 0)) throw new ControlError(400, `${field} must be a non-negative integer`);
  }
  for (const field of Object.keys(patch)) {
    if (!QUOTA_FIELDS.includes(field)) throw new ControlError(400, `unknown field ${field}`);
  }
  rollQuotaDay(oa, platform.now());
  if (typeof dailyQuota === 'number') setDailyQuota(oa, dailyQuota);
  if (typeof usedToday === 'number') oa.usedToday = usedToday;
  if (typeof remaining === 'number') oa.usedToday = Math.max(0, oa.daily_quota - remaining);
  stateChanged(platform, false);
  return quotaView(platform, oa);
}
