import { describe, expect, it } from 'vitest';
import { createSecretToken, createSortableId } from './ids.ts';

describe('createSortableId', () => {
  it('sorts by creation order, also within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, (_, index) => createSortableId('msg', 1_800_000_000_000 + Math.floor(index / 100)));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('counts the random part up by one within a millisecond, and draws it afresh the next', () => {
    const digits = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    const randomPart = (id: string) => [...id.slice(-16)].reduce((value, digit) => value * 32n + BigInt(digits.indexOf(digit)), 0n);
    const time = 1_900_000_000_000;
    const sameMillisecond = Array.from({ length: 5 }, () => createSortableId('msg', time));
    sameMillisecond.forEach((id, index) => expect(randomPart(id)).toBe(randomPart(sameMillisecond[0]!) + BigInt(index)));
    const nextMilliseconds = Array.from({ length: 20 }, (_, index) => randomPart(createSortableId('msg', time + 1 + index)));
    expect(new Set(nextMilliseconds).size).toBe(20);
  });

  it('has the prefix and a fixed length', () => {
    expect(createSortableId('msg')).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
  });
});

describe('createSecretToken', () => {
  it('is random and url-safe', () => {
    const first = createSecretToken('tms_live_');
    expect(first).toMatch(/^tms_live_[A-Za-z0-9_-]{43}$/);
    expect(createSecretToken('tms_live_')).not.toBe(first);
  });
});
