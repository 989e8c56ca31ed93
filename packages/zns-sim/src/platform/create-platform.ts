/** Builds the platform from a seed (and, with a state file, from what it kept), and stops it. */
import { EventDispatcher } from '../events.ts';
import { DEFAULT_FAULTS } from '../faults.ts';
import { generateRsaKey, rsaKeyFromPem } from '../rsa.ts';
import { Scheduler } from '../scheduler.ts';
import type { NormalizedSeed, SeedOa } from '../seed.ts';
import type { PersistedState } from '../state.ts';
import { accountFromSeed, type OaState } from './accounts.ts';
import { MessageIdSource } from './messages.ts';
import { addAccessToken, newRefreshToken, replaceRefreshToken } from './oauth-tokens.ts';
import { importState } from './persistence.ts';
import type { Platform } from './platform-state.ts';
import { vietnamDay } from './quota.ts';
import { ReceivedLog } from './received-log.ts';
import { compileRecipientRule } from './recipient-rules.ts';
import { newCounters } from './stats.ts';
import { templateFromSeed } from './templates.ts';

export interface PlatformOptions {
  now?: () => number;
  /** A saved state to continue from (see persistence.ts). */
  state?: PersistedState | null;
}

function addSeedAccount(platform: Platform, seed: SeedOa, quotaDay: number): void {
  const oa = accountFromSeed(seed, quotaDay);
  platform.accounts.set(oa.oa_id, oa);
  platform.appSecrets.set(oa.app_id, oa.app_secret);
  replaceRefreshToken(platform, oa, newRefreshToken(platform, seed.refresh_token));
  if (seed.access_token) addAccessToken(platform, oa, seed.access_token);
  for (const template of seed.templates ?? []) platform.templates.set(template.template_id, templateFromSeed(template, oa, platform.startedAt));
}

async function loadSeedRsaKey(platform: Platform, seed: SeedOa, oa: OaState): Promise<void> {
  if (seed.rsa === null) return;
  if (seed.rsa === undefined || seed.rsa === 'generate') oa.rsaKey = await generateRsaKey(platform.settings.rsa_key_bits);
  else oa.rsaKey = rsaKeyFromPem(seed.rsa.private_key_pem);
}

export async function createPlatform(seed: NormalizedSeed, options: PlatformOptions = {}): Promise<Platform> {
  const settings = seed.settings;
  const now = options.now ?? Date.now;
  const scheduler = new Scheduler();
  const platform: Platform = {
    settings,
    now,
    startedAt: now(),
    scheduler,
    events: new EventDispatcher(() => settings.events, scheduler),
    accounts: new Map(),
    appSecrets: new Map(),
    templates: new Map(),
    accessTokens: new Map(),
    refreshTokens: new Map(),
    authorizationCodes: new Map(),
    recipientRules: seed.recipient_rules.map(compileRecipientRule),
    messages: new Map(),
    messageIds: new MessageIdSource(),
    received: new ReceivedLog(() => settings.received_limit),
    trackingIdCounts: new Map(),
    counters: newCounters(),
    routeCounters: new Map(),
    faults: { ...DEFAULT_FAULTS },
    faultsOn: false,
    onStateChange: null,
    storeSend: null,
  };
  const quotaDay = vietnamDay(now());
  for (const seedAccount of seed.oas) addSeedAccount(platform, seedAccount, quotaDay);
  const saved = new Set((options.state?.oas ?? []).map((oa) => oa.oa_id));
  await Promise.all(
    seed.oas
      // A saved OA brings its own key (or none): a new one would not match what clients already fetched.
      .filter((seedAccount) => !saved.has(seedAccount.oa_id))
      .map((seedAccount) => loadSeedRsaKey(platform, seedAccount, platform.accounts.get(seedAccount.oa_id) as OaState)),
  );
  if (options.state) importState(platform, options.state);
  return platform;
}

export async function closePlatform(platform: Platform): Promise<void> {
  platform.scheduler.close();
  await platform.events.close();
}
