import { createRequire } from 'node:module';
import type { Agent as UndiciAgent } from 'undici';

/**
 * undici's connection-pooling Agent, loaded on its own. The package's entry point loads all of
 * undici (fetch, WebSocket, caches, mocks) into every thread that imports it: about 3 MB more heap
 * and 100 ms more start-up per thread, for code the gateway never runs, as it only dispatches
 * requests through an Agent.
 */
export const Agent = loadAgent();

function loadAgent(): typeof UndiciAgent {
  const require = createRequire(import.meta.url);
  try {
    return require('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;
  } catch (error) {
    // Another undici release may keep its Agent elsewhere: then the whole package, which works the
    // same (test/operator/module-loading.test.ts reports the difference).
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    return (require('undici') as { Agent: typeof UndiciAgent }).Agent;
  }
}
export type Agent = UndiciAgent;
