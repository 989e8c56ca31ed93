import { pingStore, type Dialect } from '../store/database.ts';
import type { AnonymousCaller, OperatorCaller, VerbCall } from './context.ts';
import { ApiError } from './errors.ts';

/**
 * Readiness: the store answers, and no worker loop of this process has stopped completing rounds
 * (infrastructure/loop-health.ts): such a process answers, but the work it exists for does not move.
 */
export async function checkReadiness({ ctx }: VerbCall<AnonymousCaller, Record<string, never>>): Promise<{ store: Dialect }> {
  try {
    await pingStore(ctx.store);
  } catch (error) {
    ctx.log.warn({ err: error }, 'store not reachable');
    throw new ApiError('service_unavailable', 'store not reachable');
  }
  let stalled;
  try {
    stalled = await ctx.parts.metrics.stalledLoops(ctx.clock());
  } catch (error) {
    ctx.log.warn({ err: error }, 'worker thread not answering');
    throw new ApiError('service_unavailable', `worker thread not answering: ${(error as Error).message}`);
  }
  if (stalled.length > 0) {
    const described = stalled.map((loop) => `${loop.loop} (${Math.round(loop.ageMs / 1000)} s without progress, limit ${Math.round(loop.boundMs / 1000)} s)`);
    ctx.log.warn({ stalled }, 'worker loop stalled');
    throw new ApiError('service_unavailable', `worker loop stalled: ${described.join(', ')}`);
  }
  return { store: ctx.store.dialect };
}

/** The Prometheus exposition of this process's metrics. */
export async function renderMetrics({ ctx }: VerbCall<OperatorCaller, Record<string, never>>): Promise<{ contentType: string; body: string }> {
  return ctx.parts.metrics.render();
}
