import { createRequire } from 'node:module';
import type { Agent as UndiciAgent, Dispatcher } from 'undici';

/**
 * undici's connection-pooling Agent, made (and undici loaded) when the first request goes out.
 *
 * Only the Agent is loaded: the package's entry point loads all of undici (fetch, WebSocket,
 * caches, mocks) into every thread that imports it, about 3 MB more heap and 100 ms more start-up
 * per thread, for code the gateway never runs. And only on the first request: the API's thread
 * holds a platform client and a webhook transport for operator and console actions that most
 * processes never take, and would otherwise keep undici's code and Node's HTTP client in its heap
 * for nothing.
 */
export class OnDemandAgent implements RequestDispatcher {
  private agent: UndiciAgent | null = null;

  constructor(private readonly options: UndiciAgent.Options) {}

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.agent ??= new (loadAgent())(this.options);
    return this.agent.dispatch(options, handler);
  }

  /** Closes the Agent's connections once they finish; nothing to do if no request ever went out. */
  async close(): Promise<void> {
    await this.agent?.close();
  }
}

/** What the platform client and the webhook transport send through: an OnDemandAgent, or any undici dispatcher. */
export interface RequestDispatcher {
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean;
  close(): Promise<void>;
}

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
