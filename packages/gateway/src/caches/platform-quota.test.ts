import { describe, expect, it } from 'vitest';
import { dailyQuotaOn, type QuotaLookup } from './platform-quota.ts';

describe('dailyQuotaOn', () => {
  const lookup: QuotaLookup = { figures: { day: '2026-11-21', dailyQuota: 20, usedElsewhere: 6 }, error: null };

  it("uses the platform's tier and today's use by others on the day of the lookup", () => {
    expect(dailyQuotaOn(lookup, 1000, '2026-11-21')).toEqual({ dailyQuota: 20, usedElsewhere: 6, error: null });
  });

  it('gives another day (a scheduled send, or a lookup from before midnight) the tier alone', () => {
    expect(dailyQuotaOn(lookup, 1000, '2026-11-22')).toEqual({ dailyQuota: 20, usedElsewhere: 0, error: null });
  });

  it('falls back to the configured daily quota, with the reason, when the platform gave no figures', () => {
    expect(dailyQuotaOn({ figures: null, error: 'the platform is unavailable: ZNS answered HTTP 503' }, 1000, '2026-11-21')).toEqual({
      dailyQuota: 1000,
      usedElsewhere: 0,
      error: 'the platform is unavailable: ZNS answered HTTP 503',
    });
  });

  it('reports no error when lookups are off', () => {
    expect(dailyQuotaOn({ figures: null, error: null }, 1000, '2026-11-21')).toEqual({ dailyQuota: 1000, usedElsewhere: 0, error: null });
  });
});
