/** One timed run of an end-to-end loop (TMS's or Kannel's): send every message, wait for every callback, count the CPU. */
import { meterProgramCpu, readCpuSeconds } from './processes.ts';
import { startStoreWriteMeter, type StoreWrites, type StoreWriteSource } from './store-writes.ts';
import type { CountingReceiver } from './webhook-receiver.ts';

export interface LoopPhase {
  label: 'cold' | 'warm';
  messages: number;
  /** First request → last new callback. */
  seconds: number;
  perSecond: number;
  /** First request → last answer to a send. */
  acceptSeconds: number;
  /** The processes of the system under test; not the load generator or the receiver. */
  cpuSeconds: number | null;
  cpuMicrosecondsPerMessage: number | null;
  /** The same, process by process (by the names the caller gave them), so a change can be placed. */
  cpuMicrosecondsPerMessageByProcess: Record<string, number> | null;
  /**
   * The local database server's processes, beside the system under test and not in its total (a
   * lower bound, see meterProgramCpu); null when not measured (SQLite, a remote server).
   */
  databaseCpuMicrosecondsPerMessage: number | null;
  /** What the store wrote during the run (store-writes.ts); null when not measured (Kannel) or not readable. */
  storeWrites: StoreWrites | null;
}

/** "gateway 560 + simulator 110": where the CPU per message went. */
export function describeCpuByProcess(phase: LoopPhase): string {
  if (phase.cpuMicrosecondsPerMessageByProcess === null) return 'per process: not readable';
  const parts = Object.entries(phase.cpuMicrosecondsPerMessageByProcess);
  return parts.map(([name, microseconds]) => `${name} ${microseconds.toFixed(0)}`).join(' + ');
}

/**
 * "; gateway ÷ simulator CPU 4.1×": the gateway's CPU per message over the simulator's, in the same
 * run. This machine's speed swings by half from one minute to the next, and moves both alike; the
 * simulator's code is the same in every run, so this ratio shows a change to the gateway's CPU of a
 * few percent that the absolute figures hide. Empty when the run has no simulator.
 */
export function describeGatewayToSimulatorCpu(phase: LoopPhase): string {
  const byProcess = phase.cpuMicrosecondsPerMessageByProcess;
  const simulator = byProcess?.simulator;
  if (!byProcess || !simulator) return '';
  const gateway = Object.entries(byProcess).reduce((sum, [name, microseconds]) => (name === 'simulator' ? sum : sum + microseconds), 0);
  return `; gateway ÷ simulator CPU ${(gateway / simulator).toFixed(2)}×`;
}

export async function measureLoopPhase(input: {
  label: LoopPhase['label'];
  messages: number;
  /** The system under test, by name (its processes' user + system time is counted). */
  processes: Record<string, number>;
  /** The command name of a database server on this machine whose CPU is counted beside them ('postgres'). */
  databaseServer?: string | null;
  /** Whose writes to count as the store's (store-writes.ts); none for a system without a store. */
  storeWrites?: StoreWriteSource | null;
  receiver: CountingReceiver;
  timeoutSeconds: number;
  /** What a callback is called in progress lines ("reports", "callbacks"). */
  callbackName: string;
  send(): Promise<void>;
  say(text: string): void;
}): Promise<LoopPhase> {
  const { receiver, say } = input;
  const callbacksBefore = receiver.stats.unique;
  const named = Object.entries(input.processes);
  const cpuBefore = named.map(([, pid]) => readCpuSeconds(pid));
  const databaseMeter = input.databaseServer ? meterProgramCpu(input.databaseServer) : null;
  const storeWriteMeter = input.storeWrites ? await startStoreWriteMeter(input.storeWrites) : null;
  const started = performance.now();
  await input.send();
  const acceptSeconds = (performance.now() - started) / 1000;
  await receiver.waitForUnique(callbacksBefore + input.messages, input.timeoutSeconds * 1000, (unique) =>
    say(`  ${((performance.now() - started) / 1000).toFixed(0)} s: ${(unique - callbacksBefore).toLocaleString('en-US')} ${input.callbackName}`),
  );
  const seconds = ((receiver.stats.lastNewAt ?? performance.now()) - started) / 1000;
  // Work that finishes after the last callback (recording its outcome, reading its answer) is counted too.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const spent = named.map(([, pid], index) => {
    const before = cpuBefore[index] ?? null;
    const after = readCpuSeconds(pid);
    return before === null || after === null ? null : after - before;
  });
  const databaseSeconds = databaseMeter?.stop() ?? null;
  const storeWrites = (await storeWriteMeter?.stop()) ?? null;
  const complete = spent.every((seconds) => seconds !== null);
  const cpuSeconds = complete ? spent.reduce<number>((sum, seconds) => sum + seconds!, 0) : null;
  return {
    label: input.label,
    messages: input.messages,
    seconds,
    perSecond: input.messages / seconds,
    acceptSeconds,
    cpuSeconds,
    cpuMicrosecondsPerMessage: cpuSeconds === null ? null : (cpuSeconds * 1e6) / input.messages,
    cpuMicrosecondsPerMessageByProcess: complete ? Object.fromEntries(named.map(([name], index) => [name, (spent[index]! * 1e6) / input.messages])) : null,
    databaseCpuMicrosecondsPerMessage: databaseSeconds === null ? null : (databaseSeconds * 1e6) / input.messages,
    storeWrites,
  };
}
