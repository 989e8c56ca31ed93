/**
 * Recipient rules: which recipients the platform refuses, never delivers to, or delivers to later than usual.
 * The first matching rule in seed order wins.
 */
import { controlErrorFromSeedError, ControlError } from '../control-error.ts';
import { parseRecipientRule } from '../seed-parser.ts';
import type { SeedRecipientRule } from '../seed.ts';
import type { Platform } from './platform-state.ts';

export interface CompiledRecipientRule {
  suffix: string | null;
  phones: Set<string> | null;
  /** Lower-case. */
  hashes: Set<string> | null;
  outcome: 'deliver' | 'never' | 'error';
  error: number;
  /** Overrides events.delay_ms; null: the usual delay. */
  deliveryDelayMs: number | null;
}

export function compileRecipientRule(rule: SeedRecipientRule): CompiledRecipientRule {
  return {
    suffix: rule.suffix ?? null,
    phones: rule.phones ? new Set(rule.phones) : null,
    hashes: rule.hash_phones ? new Set(rule.hash_phones.map((hash) => hash.toLowerCase())) : null,
    outcome: rule.result === 'error' ? 'error' : rule.result === 'never_deliver' ? 'never' : 'deliver',
    error: rule.error ?? -118,
    deliveryDelayMs: rule.delivery_delay_ms ?? null,
  };
}

/** Phone sends match `phones`/`suffix`; hashphone sends (phone null) match `hash_phones`. */
export function recipientRuleFor(rules: readonly CompiledRecipientRule[], phone: string | null, hash: string): CompiledRecipientRule | null {
  for (const rule of rules) {
    if (phone !== null) {
      if (rule.phones !== null && rule.phones.has(phone)) return rule;
      if (rule.suffix !== null && phone.endsWith(rule.suffix)) return rule;
    } else if (rule.hashes !== null && rule.hashes.has(hash)) return rule;
  }
  return null;
}

/** Replaces every rule (control API). */
export function setRecipientRules(platform: Platform, rules: unknown): SeedRecipientRule[] {
  if (!Array.isArray(rules)) throw new ControlError(400, 'recipient_rules must be an array');
  let parsed: SeedRecipientRule[];
  try {
    parsed = rules.map((rule: unknown, index) => parseRecipientRule(rule, `recipient_rules[${index}]`));
  } catch (err) {
    throw controlErrorFromSeedError(err);
  }
  platform.recipientRules = parsed.map(compileRecipientRule);
  return parsed;
}
