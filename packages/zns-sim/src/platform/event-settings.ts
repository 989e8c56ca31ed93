/** Delivery-event settings and attempts as the control API reads and changes them (events.ts sends the events). */
import { controlErrorFromSeedError } from '../control-error.ts';
import type { EventAttempt } from '../events.ts';
import { parseEventSettings } from '../seed-parser.ts';
import type { EventSettings } from '../seed.ts';
import type { Platform } from './platform-state.ts';

export function eventSettings(platform: Platform): EventSettings {
  const settings = platform.settings.events;
  return { ...settings, retry_delays_ms: [...settings.retry_delays_ms] };
}

/** Partial update, checked like the seed's `settings.events`. */
export function setEventSettings(platform: Platform, patch: unknown): EventSettings {
  try {
    platform.settings.events = parseEventSettings(patch, 'events', platform.settings.events);
  } catch (err) {
    throw controlErrorFromSeedError(err);
  }
  return eventSettings(platform);
}

export function eventAttempts(platform: Platform): EventAttempt[] {
  return platform.events.attempts();
}
