import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config/variables.ts';

const run = promisify(execFile);
const RUN_TS = fileURLToPath(new URL('../../bin/run-ts.js', import.meta.url));
const CHURN = fileURLToPath(new URL('./heap-growth-churn.ts', import.meta.url));

/** The churn workload's peak old space in a fresh process, with `percent` as TMS_HEAP_GROWTH_PERCENT. */
async function peakOldSpaceMb(percent: number): Promise<number> {
  // The same heap limit on every machine, so V8's own growth rule does not depend on the machine's memory.
  const { stdout } = await run(process.execPath, ['--max-old-space-size=4096', RUN_TS, CHURN, String(percent)], { timeout: 60_000 });
  return (JSON.parse(stdout) as { peakOldSpaceMb: number }).peakOldSpaceMb;
}

describe('TMS_HEAP_GROWTH_PERCENT: how far a heap grows past what it holds', () => {
  it('keeps a busy process well below the heap that V8 lets garbage build up to by its own rule', { timeout: 120_000 }, async () => {
    const [ownRule, gatewayDefault] = await Promise.all([peakOldSpaceMb(0), peakOldSpaceMb(CONFIG_VARIABLES.TMS_HEAP_GROWTH_PERCENT.default)]);
    // About 45 MB is live at any time; by V8's own rule the old space peaked near 290 MB, with 30% near 120 MB.
    expect(gatewayDefault).toBeLessThan(0.6 * ownRule);
  });
});
