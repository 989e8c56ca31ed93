import { createRequire } from 'node:module';
import type { Agent as UndiciAgent } from 'undici';

/**
 * undici's connection-pooling Agent, loaded on its own. The package's entry point loads all of
 * undici (fetch, WebSocket, caches, mocks) into every thread that imports it: about 3 MB more heap
 * and 100 ms more start-up per thread, for code the gateway never runs, as it only dispatches
 * requests through an Agent. The module's path is pinned by the lockfile's undici version.
 */
export const Agent = createRequire(import.meta.url)('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;
export type Agent = UndiciAgent;
