/** The faults in force (latency, 5xx, timeouts, -100, outages), changed through the control API. */
import { DEFAULT_FAULTS, faultsActive, mergeFaults, type Faults } from '../faults.ts';
import type { Platform } from './platform-state.ts';

/** Partial update; throws FaultError on a bad field. */
export function setFaults(platform: Platform, patch: unknown): Faults {
  platform.faults = mergeFaults(platform.faults, patch);
  platform.faultsOn = faultsActive(platform.faults);
  return { ...platform.faults };
}

export function clearFaults(platform: Platform): Faults {
  platform.faults = { ...DEFAULT_FAULTS };
  platform.faultsOn = false;
  return { ...platform.faults };
}
