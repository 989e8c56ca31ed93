import { describe, expect, it } from 'vitest';
import { TtlCache } from './ttl-cache.ts';

describe('TtlCache', () => {
  it('expires entries after the TTL', async () => {
    let now = 1000;
    const cache = new TtlCache<string>(500, 10, () => now);
    cache.set('a', 'one');
    expect(cache.get('a')).toBe('one');
    now += 500;
    expect(cache.get('a')).toBeUndefined();
  });

  it('shares one load between concurrent misses', async () => {
    const cache = new TtlCache<number>(1000);
    let loads = 0;
    const load = async () => {
      loads += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return 42;
    };
    expect(await Promise.all(Array.from({ length: 10 }, () => cache.getOrLoad('k', load)))).toEqual(Array(10).fill(42));
    expect(loads).toBe(1);
  });

  it('does not keep a value loaded before an invalidation', async () => {
    const cache = new TtlCache<string>(1000);
    let release: (value: string) => void = () => undefined;
    const stale = cache.getOrLoad('k', () => new Promise<string>((resolve) => (release = resolve)));
    cache.delete('k');
    release('old');
    expect(await stale).toBe('old');
    expect(await cache.getOrLoad('k', async () => 'new')).toBe('new');
  });
});
