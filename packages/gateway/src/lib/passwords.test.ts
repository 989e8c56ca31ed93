import { describe, expect, it } from 'vitest';
import { UNKNOWN_USER_HASH, hashPassword, verifyPassword } from './passwords.ts';

describe('console passwords', () => {
  it('verifies the password it hashed and nothing else', async () => {
    const hash = await hashPassword('mật khẩu đủ dài');
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(hash).not.toContain('mật khẩu');
    expect(await verifyPassword('mật khẩu đủ dài', hash)).toBe(true);
    expect(await verifyPassword('mật khẩu đủ dài ', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('salts each hash, so equal passwords do not have equal hashes', async () => {
    expect(await hashPassword('same password')).not.toBe(await hashPassword('same password'));
  });

  it('treats the same text typed in another Unicode normal form as the same password', async () => {
    const composed = 'Nguyễn-password';
    const hash = await hashPassword(composed);
    expect(await verifyPassword(composed.normalize('NFD'), hash)).toBe(true);
  });

  it('never matches a malformed stored hash or the unknown-user hash', async () => {
    expect(await verifyPassword('anything', 'plain-text')).toBe(false);
    expect(await verifyPassword('anything', 'scrypt$1$2')).toBe(false);
    expect(await verifyPassword('anything', UNKNOWN_USER_HASH)).toBe(false);
  });
});
