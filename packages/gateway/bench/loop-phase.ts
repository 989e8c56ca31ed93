/** One timed run of an end-to-end loop (TMS's or Kannel's): send every message, wait for every callback, count the CPU. */
import { readTotalCpuSeconds } from './processes.ts';
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
}

export async function measureLoopPhase(input: {
  label: LoopPhase['label'];
  messages: number;
  /** The system under test, whose user + system time is counted. */
  pids: number[];
  receiver: CountingReceiver;
  timeoutSeconds: number;
  /** What a callback is called in progress lines ("reports", "callbacks"). */
  callbackName: string;
  send(): Promise<void>;
  say(text: string): void;
}): Promise<LoopPhase> {
  const { receiver, say } = input;
  const callbacksBefore = receiver.stats.unique;
  const cpuBefore = readTotalCpuSeconds(input.pids);
  const started = performance.now();
  await input.send();
  const acceptSeconds = (performance.now() - started) / 1000;
  await receiver.waitForUnique(callbacksBefore + input.messages, input.timeoutSeconds * 1000, (unique) =>
    say(`  ${((performance.now() - started) / 1000).toFixed(0)} s: ${(unique - callbacksBefore).toLocaleString('en-US')} ${input.callbackName}`),
  );
  const seconds = ((receiver.stats.lastNewAt ?? performance.now()) - started) / 1000;
  // Work that finishes after the last callback (recording its outcome, reading its answer) is counted too.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const cpuAfter = readTotalCpuSeconds(input.pids);
  const cpuSeconds = cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null;
  return {
    label: input.label,
    messages: input.messages,
    seconds,
    perSecond: input.messages / seconds,
    acceptSeconds,
    cpuSeconds,
    cpuMicrosecondsPerMessage: cpuSeconds === null ? null : (cpuSeconds * 1e6) / input.messages,
  };
}
