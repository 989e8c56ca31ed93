import { describe, expect, it } from 'vitest';
import { allPlatformErrors, describePlatformError, GATEWAY_ERRORS, type RetryKind } from './error-catalogue.ts';

describe('ZNS error catalogue', () => {
  it('covers every code of the reference with an English message and a Vietnamese reason', () => {
    const codes = allPlatformErrors().map((entry) => entry.code);
    for (const code of [-100, -108, -1121, -1122, -118, -123, -124, -131, -133, -144, -146, -147, -162]) expect(codes).toContain(code);
    for (const entry of allPlatformErrors()) {
      expect(entry.message.length).toBeGreaterThan(3);
      expect(entry.reason).toMatch(/[a-zà-ỹđ]/i);
      expect(entry.reason).not.toMatch(/no VN source/);
    }
  });

  it('gives every code the treatment docs/zns-platform.md documents: backoff, token refresh, night window, or final', () => {
    const documented: Record<number, RetryKind> = { [-100]: 'backoff', [-32]: 'backoff', [-129]: 'backoff', [-152]: 'backoff', [-124]: 'refresh_token', [-216]: 'refresh_token', [-220]: 'refresh_token', [-133]: 'after_night_window' };
    const entries = allPlatformErrors();
    for (const code of Object.keys(documented).map(Number)) expect(entries.map((entry) => entry.code)).toContain(code);
    for (const entry of entries) expect({ code: entry.code, retry: entry.retry }).toEqual({ code: entry.code, retry: documented[entry.code] ?? 'never' });
  });

  it('knows every code of the agreed range -100 to -153', () => {
    const known = new Set(allPlatformErrors().map((entry) => entry.code));
    const missing = Array.from({ length: 54 }, (_, index) => -100 - index).filter((code) => !known.has(code));
    expect(missing).toEqual([]);
  });

  it('tells transient faults from permanent ones', () => {
    expect(describePlatformError(-100).retry).toBe('backoff');
    expect(describePlatformError(-124).retry).toBe('refresh_token');
    expect(describePlatformError(-133).retry).toBe('after_night_window');
    expect(describePlatformError(-108)).toMatchObject({ retry: 'never', message: 'Phone number invalid', reason: 'Số điện thoại không hợp lệ' });
    expect(describePlatformError(-144).retry).toBe('never');
  });

  it('treats an unknown code as permanent and keeps the platform message', () => {
    expect(describePlatformError(-777, 'Something new')).toMatchObject({ code: -777, retry: 'never', message: 'Something new' });
  });

  it("keeps the gateway's own codes apart from the platform's", () => {
    for (const entry of Object.values(GATEWAY_ERRORS)) expect(allPlatformErrors().map((e) => e.code)).not.toContain(entry.code);
  });
});
