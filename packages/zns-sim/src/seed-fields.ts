/** Field checks of the seed parser: each returns the field's value or throws (`fail`) a SeedError naming the field's path. */
import type { JsonObject } from './json-object.ts';
import { SeedError } from './seed.ts';

export function fail(path: string, what: string): never {
  throw new SeedError(`seed: ${path} ${what}`);
}

export function stringField(o: JsonObject, key: string, path: string, options: { optional?: boolean; nonEmpty?: boolean } = {}): string | undefined {
  const v = o[key];
  if (v === undefined && options.optional) return undefined;
  if (typeof v !== 'string') fail(`${path}.${key}`, 'must be a string');
  if (options.nonEmpty !== false && v.length === 0) fail(`${path}.${key}`, 'must not be empty');
  return v;
}

export function integerField(o: JsonObject, key: string, path: string, min: number, max: number, optional = true): number | undefined {
  const v = o[key];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(`${path}.${key}`, `must be an integer in ${min}..${max}`);
  return v;
}

export function rateField(o: JsonObject, key: string, path: string): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) fail(`${path}.${key}`, 'must be a number in 0..1');
  return v;
}

export function oneOfField<T extends string>(o: JsonObject, key: string, path: string, values: readonly T[]): T | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !values.includes(v as T)) fail(`${path}.${key}`, `must be one of ${values.join(', ')}`);
  return v as T;
}

export function stringArrayField(o: JsonObject, key: string, path: string): string[] | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) fail(`${path}.${key}`, 'must be an array of strings');
  return v as string[];
}

export function checkKnownFields(o: JsonObject, allowed: readonly string[], path: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) fail(`${path}.${k}`, 'is not a known field');
  }
}
