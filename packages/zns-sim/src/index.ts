/**
 * @tms/zns-sim: a stand-alone simulator of Zalo's ZNS platform, speaking ZNS's own wire protocol over HTTP.
 *
 *   const sim = await startSimulator({ seed: 'seeds/demo.json', eventsUrl: 'http://127.0.0.1:3000/platform/zns/events' });
 *   // point the gateway's OAuth and ZNS base URLs at sim.url; use sim.control in tests; await sim.close();
 */
import { fileURLToPath } from 'node:url';
import { createControl, type SimulatorControl } from './control.ts';
import { isJsonObject } from './json-object.ts';
import { closePlatform, createPlatform } from './platform/create-platform.ts';
import { exportState, persistedSend } from './platform/persistence.ts';
import { parseSeed, readSeedJson } from './seed-parser.ts';
import type { NormalizedSeed, Seed, SeedSettings } from './seed.ts';
import { buildServer } from './server.ts';
import { readStateFile, StateFile } from './state.ts';

export type { SimulatorControl } from './control.ts';
export type { OaView } from './platform/accounts.ts';
export type { MessageFilter, MessageView } from './platform/messages.ts';
export type { QuotaView } from './platform/quota.ts';
export type { ReceivedEntry, ReceivedFilter } from './platform/received-log.ts';
export type { Stats } from './platform/stats.ts';
export type { TemplatePatch, TemplateView } from './platform/template-control.ts';
export type { EventAttempt, EventStats } from './events.ts';
export { signEvent } from './events.ts';
export type { Faults, FaultScope, OutageMode } from './faults.ts';
export { DEFAULT_FAULTS } from './faults.ts';
export { OAUTH_ERRORS, ZNS_MESSAGES } from './errors.ts';
export { StateFileError, STATE_FILE_MESSAGE_LIMIT } from './state.ts';
export type { PersistedState } from './state.ts';
export { parseSeed, loadSeedFile } from './seed-parser.ts';
export { SeedError, DEFAULT_RECIPIENT_RULES, DEFAULT_SETTINGS, DEFAULT_EVENT_SETTINGS } from './seed.ts';
export type { Seed, SeedOa, SeedTemplate, SeedParam, SeedRecipientRule, SeedSettings, SeedEventSettings, EventSettings, Settings, NormalizedSeed } from './seed.ts';

/** The bundled demo seed (matches the gateway's demo workspace). */
export const DEMO_SEED_PATH = fileURLToPath(new URL('../seeds/demo.json', import.meta.url));

export interface SimulatorOptions {
  /** A seed file path, or a seed object (same format as the file). Default: the bundled demo seed. */
  seed?: string | Seed;
  /** Listen port; 0 (default) picks a free one. */
  port?: number;
  /** Listen address; default 127.0.0.1. */
  host?: string;
  /** Overrides settings.events.url of the seed (null disables events). */
  eventsUrl?: string | null;
  /** Overrides settings.events.delay_ms of the seed. */
  eventsDelayMs?: number;
  /** Overrides individual settings of the seed (shallow; `events` is merged one level deeper). */
  settings?: SeedSettings;
  /** Clock for token expiry, quota days and sent_time (tests). Default Date.now. */
  now?: () => number;
  /**
   * Keep the platform's state (tokens, quota, RSA keys, recent messages) in this JSON file: loaded at start
   * when it exists, written atomically as it changes. Default: none, every start begins from the seed.
   */
  stateFile?: string;
  /**
   * With `stateFile`: store each accepted send before answering it, so that a crash (SIGKILL) never forgets
   * a send a client was told about, as on the real platform. Each send is then one line appended to a
   * journal beside the file, with an fsync. Default false: sends are written up to a second later.
   */
  durableSends?: boolean;
}

export interface RunningSimulator {
  /** Base URL, e.g. http://127.0.0.1:40123: both the OAuth base and the business API base. */
  url: string;
  port: number;
  control: SimulatorControl;
  /** Writes the state file now if anything is waiting to be written (no-op without `stateFile`). */
  saveState(): void;
  close(): Promise<void>;
}

async function resolveSeed(options: SimulatorOptions): Promise<NormalizedSeed> {
  const source = options.seed ?? DEMO_SEED_PATH;
  const seed = typeof source === 'string' ? await readSeedJson(source) : structuredClone(source);
  if (!isJsonObject(seed)) return parseSeed(seed);
  const settings = { ...((seed.settings as Record<string, unknown> | undefined) ?? {}) };
  const events = { ...((settings.events as Record<string, unknown> | undefined) ?? {}) };
  if (options.settings) {
    const { events: ev, ...rest } = options.settings;
    Object.assign(settings, rest);
    if (ev) Object.assign(events, ev);
  }
  if (options.eventsUrl !== undefined) events.url = options.eventsUrl;
  if (options.eventsDelayMs !== undefined) events.delay_ms = options.eventsDelayMs;
  settings.events = events;
  seed.settings = settings;
  return parseSeed(seed);
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  if (options.durableSends === true && options.stateFile === undefined) throw new Error('durableSends needs stateFile: without a state file no send is kept');
  const seed = await resolveSeed(options);
  const state = options.stateFile === undefined ? null : readStateFile(options.stateFile);
  const platform = await createPlatform(seed, { ...(options.now ? { now: options.now } : {}), state });
  let stateFile: StateFile | null = null;
  if (options.stateFile !== undefined) {
    stateFile = new StateFile(options.stateFile, () => exportState(platform));
    const file = stateFile;
    platform.onStateChange = (urgent) => (urgent ? file.saveNow() : file.saveSoon());
    if (options.durableSends === true) platform.storeSend = (message) => file.appendSend(persistedSend(message));
    // Written before the first request: keys generated now must be the ones found after a restart.
    stateFile.saveNow();
  }
  const { app, abortPending } = buildServer(platform);
  const host = options.host ?? '127.0.0.1';
  try {
    await app.listen({ port: options.port ?? 0, host });
  } catch (err) {
    await closePlatform(platform);
    stateFile?.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    control: createControl(platform),
    saveState() {
      stateFile?.flush();
    },
    close() {
      closing ??= (async () => {
        abortPending();
        try {
          await app.close();
          await closePlatform(platform);
        } finally {
          // After the last request: everything answered is in the file.
          stateFile?.close();
        }
      })();
      return closing;
    },
  };
}
