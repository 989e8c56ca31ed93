/**
 * loop-vs-kannel: our full loop against Kannel's, interleaved in one run, so both see the same
 * machine at nearly the same moment. TMS_BENCH_LOOP_PAIRS (3) pairs, each:
 *   1. the TMS loop on SQLite (`tms start`, webhooks.ts): a cold run on the fresh gateway, then a
 *      warm run on the same processes;
 *   2. Kannel (kannel.ts): the same, a cold run on freshly started boxes, then a warm run.
 * Same message count (TMS_BENCH_LOOP_MESSAGES) on both sides, TMS_BENCH_LOOP_CONNECTIONS on our API
 * and TMS_BENCH_KANNEL_CONNECTIONS on Kannel's sendsms (both 50 by default). Each pair gives
 * TMS ÷ Kannel in messages/s, cold against cold and warm against warm; the medians over the pairs
 * are checked against the targets. Without Kannel installed the scenario is skipped, not failed.
 */
import { KANNEL_DLR_MASK, kannelMissing, runKannel, type KannelPhase, type KannelResult } from './kannel.ts';
import { fmt } from './report.ts';
import type { LoopPhase } from './loop-phase.ts';
import { loopTarget, runWebhookScenario, WEBHOOK_SCENARIOS, type WebhookContext, type WebhookResult } from './webhooks.ts';

export const LOOP_VS_KANNEL_ID = 'loop-vs-kannel';

export interface LoopVsKannelContext extends WebhookContext {
  pairs: number;
  kannelConnections: number;
  kannelImmediateReply: boolean;
}

export interface LoopVsKannelPair {
  tms: WebhookResult;
  kannel: KannelResult;
}

/** One phase (cold or warm) over all valid pairs: each pair's figures and their medians. */
export interface PhaseComparison {
  label: 'cold' | 'warm';
  tmsPerSecond: number[];
  kannelPerSecond: number[];
  /** TMS ÷ Kannel, messages/s, per pair. */
  ratios: number[];
  tmsCpuMicrosecondsPerMessage: number[];
  kannelCpuMicrosecondsPerMessage: number[];
  median: { tmsPerSecond: number | null; kannelPerSecond: number | null; ratio: number | null; tmsCpuMicrosecondsPerMessage: number | null; kannelCpuMicrosecondsPerMessage: number | null };
}

export interface LoopVsKannelResult {
  id: typeof LOOP_VS_KANNEL_ID;
  messages: number;
  tmsConnections: number;
  kannelConnections: number;
  kannelImmediateReply: boolean;
  dlrMask: number;
  /** Why the scenario did not run (Kannel not installed), or null. */
  skipped: string | null;
  pairs: LoopVsKannelPair[];
  phases: PhaseComparison[];
  problems: string[];
}

const LABELS = ['cold', 'warm'] as const;

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const tmsPhase = (pair: LoopVsKannelPair, label: 'cold' | 'warm'): LoopPhase | undefined => pair.tms.phases.find((phase) => phase.label === label);
const kannelPhase = (pair: LoopVsKannelPair, label: 'cold' | 'warm'): KannelPhase | undefined => pair.kannel.phases.find((phase) => phase.label === label);
const pairIsValid = (pair: LoopVsKannelPair): boolean => pair.tms.problems.length === 0 && pair.kannel.problems.length === 0;

function compare(pairs: LoopVsKannelPair[], label: 'cold' | 'warm'): PhaseComparison {
  const usable = pairs.filter(pairIsValid).filter((pair) => tmsPhase(pair, label) && kannelPhase(pair, label));
  const tmsPerSecond = usable.map((pair) => tmsPhase(pair, label)!.perSecond);
  const kannelPerSecond = usable.map((pair) => kannelPhase(pair, label)!.perSecond);
  const ratios = usable.map((_, index) => tmsPerSecond[index]! / kannelPerSecond[index]!);
  const tmsCpu = usable.map((pair) => tmsPhase(pair, label)!.cpuMicrosecondsPerMessage).filter((value): value is number => value !== null);
  const kannelCpu = usable.map((pair) => kannelPhase(pair, label)!.cpuMicrosecondsPerMessage).filter((value): value is number => value !== null);
  return {
    label,
    tmsPerSecond,
    kannelPerSecond,
    ratios,
    tmsCpuMicrosecondsPerMessage: tmsCpu,
    kannelCpuMicrosecondsPerMessage: kannelCpu,
    median: {
      tmsPerSecond: median(tmsPerSecond),
      kannelPerSecond: median(kannelPerSecond),
      ratio: median(ratios),
      tmsCpuMicrosecondsPerMessage: median(tmsCpu),
      kannelCpuMicrosecondsPerMessage: median(kannelCpu),
    },
  };
}

export async function runLoopVsKannel(context: LoopVsKannelContext): Promise<LoopVsKannelResult> {
  const result: LoopVsKannelResult = {
    id: LOOP_VS_KANNEL_ID,
    messages: context.loopMessages,
    tmsConnections: context.loopConnections,
    kannelConnections: context.kannelConnections,
    kannelImmediateReply: context.kannelImmediateReply,
    dlrMask: KANNEL_DLR_MASK,
    skipped: kannelMissing(),
    pairs: [],
    phases: [],
    problems: [],
  };
  if (result.skipped) {
    context.say(`${LOOP_VS_KANNEL_ID}: skipped: ${result.skipped}`);
    return result;
  }
  const loopScenario = WEBHOOK_SCENARIOS.find((scenario) => scenario.id === 'webhooks-loop-sqlite')!;
  for (let pair = 1; pair <= context.pairs; pair += 1) {
    context.say(`${LOOP_VS_KANNEL_ID}: pair ${pair} of ${context.pairs}`);
    const tms = await runWebhookScenario(loopScenario, context);
    context.say(`${LOOP_VS_KANNEL_ID}: pair ${pair} of ${context.pairs}, Kannel: ${context.loopMessages.toLocaleString('en-US')} messages through sendsms at ${context.kannelConnections} connections, cold then warm`);
    const kannel = await runKannel({ messages: context.loopMessages, connections: context.kannelConnections, immediateReply: context.kannelImmediateReply, timeoutSeconds: context.timeoutSeconds, say: context.say });
    result.pairs.push({ tms, kannel });
    for (const problem of tms.problems) result.problems.push(`pair ${pair}, TMS: ${problem}`);
    for (const problem of kannel.problems) result.problems.push(`pair ${pair}, Kannel: ${problem}`);
  }
  result.phases = LABELS.map((label) => compare(result.pairs, label));
  return result;
}

const ratioText = (value: number | null | undefined): string => (value === null || value === undefined || !Number.isFinite(value) ? '-' : `${value.toFixed(2)}×`);

function kannelRss(kannel: KannelResult): string {
  const { bearerbox, smsbox, fakesmsc } = kannel.peakRssMb;
  return [bearerbox, smsbox, fakesmsc].map((value) => fmt(value)).join(' / ');
}

const HEADER = [
  'pair',
  'TMS cold msg/s',
  'Kannel cold msg/s',
  'TMS ÷ Kannel cold',
  'TMS warm msg/s',
  'Kannel warm msg/s',
  'TMS ÷ Kannel warm',
  'TMS CPU µs/msg cold / warm',
  'Kannel CPU µs/msg cold / warm',
  'TMS peak RSS MB',
  'Kannel peak RSS MB (bearerbox / smsbox / fakesmsc)',
];

function rows(result: LoopVsKannelResult): string[][] {
  const perPair = result.pairs.map((pair, index) => {
    const figures = LABELS.map((label) => ({ tms: tmsPhase(pair, label), kannel: kannelPhase(pair, label) }));
    const [cold, warm] = figures as [(typeof figures)[number], (typeof figures)[number]];
    const ratio = (side: (typeof figures)[number]) => (side.tms && side.kannel ? side.tms.perSecond / side.kannel.perSecond : null);
    return [
      `${index + 1}${pairIsValid(pair) ? '' : ' (invalid)'}`,
      fmt(cold.tms?.perSecond ?? null),
      fmt(cold.kannel?.perSecond ?? null),
      ratioText(ratio(cold)),
      fmt(warm.tms?.perSecond ?? null),
      fmt(warm.kannel?.perSecond ?? null),
      ratioText(ratio(warm)),
      `${fmt(cold.tms?.cpuMicrosecondsPerMessage ?? null)} / ${fmt(warm.tms?.cpuMicrosecondsPerMessage ?? null)}`,
      `${fmt(cold.kannel?.cpuMicrosecondsPerMessage ?? null)} / ${fmt(warm.kannel?.cpuMicrosecondsPerMessage ?? null)}`,
      fmt(pair.tms.peakRssMb),
      kannelRss(pair.kannel),
    ];
  });
  const [cold, warm] = result.phases as [PhaseComparison | undefined, PhaseComparison | undefined];
  const range = (phase: PhaseComparison | undefined) => (phase && phase.ratios.length > 1 ? ` (${ratioText(Math.min(...phase.ratios))}–${ratioText(Math.max(...phase.ratios))})` : '');
  const medianRow = [
    'median',
    fmt(cold?.median.tmsPerSecond ?? null),
    fmt(cold?.median.kannelPerSecond ?? null),
    `${ratioText(cold?.median.ratio)}${range(cold)}`,
    fmt(warm?.median.tmsPerSecond ?? null),
    fmt(warm?.median.kannelPerSecond ?? null),
    `${ratioText(warm?.median.ratio)}${range(warm)}`,
    `${fmt(cold?.median.tmsCpuMicrosecondsPerMessage ?? null)} / ${fmt(warm?.median.tmsCpuMicrosecondsPerMessage ?? null)}`,
    `${fmt(cold?.median.kannelCpuMicrosecondsPerMessage ?? null)} / ${fmt(warm?.median.kannelCpuMicrosecondsPerMessage ?? null)}`,
    '',
    '',
  ];
  return [...perPair, medianRow];
}

function describe(result: LoopVsKannelResult): string {
  return (
    `${result.messages.toLocaleString('en-US')} messages a run, first request to last delivery callback; TMS: single sends at ${result.tmsConnections} connections on \`tms start\` (SQLite), ` +
    `API → ZNS simulator → delivered → signed report; Kannel 1.4.5: sendsms at ${result.kannelConnections} connections, answered ${result.kannelImmediateReply ? 'at once (immediate-sendsms-reply)' : "once bearerbox has the message (Kannel's default)"} → fake SMSC → dlr-mask=${result.dlrMask} callback (unsigned GET). ` +
    'Cold: fresh processes; warm: a second run on the same processes. ' +
    'CPU: every process of the system under test (TMS: gateway + simulator; Kannel: bearerbox + smsbox + fakesmsc); the load generator and the receiver are not counted on either side. ' +
    'Medians over valid pairs.'
  );
}

/** The console text: what was run, one row per pair and the medians. */
export function loopVsKannelText(result: LoopVsKannelResult): string {
  if (result.skipped) return `TMS loop vs Kannel: skipped: ${result.skipped}`;
  const all = [HEADER, ...rows(result)];
  const widths = HEADER.map((_, c) => Math.max(...all.map((cells) => cells[c]!.length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  return [`TMS loop vs Kannel, interleaved (${describe(result)}):`, line(HEADER), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)].join('\n');
}

/** The same table in Markdown, for the README. */
export function loopVsKannelMarkdown(result: LoopVsKannelResult): string {
  if (result.skipped) return `TMS loop vs Kannel: skipped: ${result.skipped}`;
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [describe(result), '', row(HEADER), row(HEADER.map((_, c) => (c === 0 ? '---' : '---:'))), ...rows(result).map(row)].join('\n');
}

/** TMS ÷ Kannel ≥ 1.0× in messages/s, TMS's CPU per message ≤ Kannel's, and the SQLite loop's own target; cold and warm. */
export function loopVsKannelTargets(result: LoopVsKannelResult): { text: string; met: boolean | null }[] {
  if (result.skipped) return [{ text: `${LOOP_VS_KANNEL_ID}: skipped: ${result.skipped}`, met: null }];
  const sqliteTarget = loopTarget({ store: 'sqlite', split: false });
  return result.phases.flatMap((phase) => {
    const { median: m, ratios } = phase;
    const known = (value: number | null): value is number => value !== null;
    const range = ratios.length > 0 ? `, range ${ratioText(Math.min(...ratios))}–${ratioText(Math.max(...ratios))}` : '';
    const cpuRatio = known(m.tmsCpuMicrosecondsPerMessage) && known(m.kannelCpuMicrosecondsPerMessage) ? m.tmsCpuMicrosecondsPerMessage / m.kannelCpuMicrosecondsPerMessage : null;
    const of = `median of ${ratios.length} pair${ratios.length === 1 ? '' : 's'}`;
    return [
      {
        text: `${LOOP_VS_KANNEL_ID} (${phase.label}): TMS ÷ Kannel ≥ 1.0× messages/s (${of}: ${ratioText(m.ratio)}${range}; ${fmt(m.tmsPerSecond)} vs ${fmt(m.kannelPerSecond)} msg/s)`,
        met: known(m.ratio) ? m.ratio >= 1 : null,
      },
      {
        text: `${LOOP_VS_KANNEL_ID} (${phase.label}): TMS CPU per message ≤ Kannel's (${of}: ${fmt(m.tmsCpuMicrosecondsPerMessage)} vs ${fmt(m.kannelCpuMicrosecondsPerMessage)} µs, ${ratioText(cpuRatio)})`,
        met: cpuRatio === null ? null : cpuRatio <= 1,
      },
      {
        text: `${LOOP_VS_KANNEL_ID} (${phase.label}): full loop, SQLite, tms start ≥ ${fmt(sqliteTarget)} messages/s (${of}: ${fmt(m.tmsPerSecond)})`,
        met: known(m.tmsPerSecond) ? m.tmsPerSecond >= sqliteTarget : null,
      },
    ];
  });
}
