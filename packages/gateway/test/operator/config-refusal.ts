import { expect } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/config.ts';

/** The ConfigError that start-up gives for this environment; fails the test when it is accepted. */
export function configErrorOf(env: Record<string, string>): ConfigError {
  try {
    parseConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`parseConfig accepted ${JSON.stringify(env)}`);
}
