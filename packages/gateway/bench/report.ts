/** The benchmark's results: the console table, the targets, and the Markdown table for the README. */
import type { StoreWrites } from './store-writes.ts';
import type { StoreCheck } from './verify.ts';

export type ScenarioKind = 'ceiling' | 'single' | 'batch';
export type StoreName = 'sqlite' | 'postgres';

export interface ScenarioResult {
  id: string;
  kind: ScenarioKind;
  store: StoreName;
  connections: number;
  seconds: number;
  /** Good answers in the measured run. */
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  recipientsPerSecond: number | null;
  percentOfCeiling: number | null;
  /** Single sends: server CPU per request ÷ the bare route's (steadier than % of a ceiling that swings with load). */
  cpuRatioToCeiling: number | null;
  peakRssMb: number | null;
  /** The server's CPU use during the measured run, in cores (1 = one core busy all the time). */
  serverCpuCores: number | null;
  /** The server's CPU time per good answer, in microseconds. */
  serverCpuUsPerRequest: number | null;
  /** A local PostgreSQL server's CPU time per good answer, in microseconds (not in the server's); null on SQLite. */
  databaseCpuUsPerRequest: number | null;
  /** What the store wrote during the measured run (store-writes.ts); null for the bare route or where unreadable. */
  storeWrites: StoreWrites | null;
  /** Bad answers, connection errors and timeouts, warm-up included. */
  errors: number;
  errorDetail: { non2xx: number; badAnswers: number; connectionErrors: number; timeouts: number; statuses: Record<string, number>; samples: string[] };
  storeCheck: StoreCheck | null;
  /** Why the scenario could not run, or why its numbers do not count. */
  problems: string[];
}

export interface Target {
  name: string;
  scenario: string;
  wanted: string;
  measured: string;
  pass: boolean | null;
}

const STORE_LABEL: Record<StoreName, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
const KIND_LABEL: Record<ScenarioKind, string> = { ceiling: 'ceiling (bare Fastify)', single: 'single sends', batch: 'batches of 500' };

/** A figure for the tables: thousands separators, fixed decimals, '-' when there is none. */
export const fmt = (value: number | null, digits = 0): string =>
  value === null || !Number.isFinite(value) ? '-' : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export const TARGETS = {
  singleCpuRatioToCeiling: { sqlite: 2.0, postgres: 2.5 },
  singleP99Ms: 20,
  batchRecipientsPerSecond: { sqlite: 80_000, postgres: 50_000 },
  peakRssMb: 300,
} as const;

export function evaluateTargets(results: ScenarioResult[]): Target[] {
  const targets: Target[] = [];
  const usable = (result: ScenarioResult) => result.problems.length === 0;
  for (const result of results) {
    if (result.kind === 'ceiling') continue;
    const store = result.store;
    const label = `${KIND_LABEL[result.kind]}, ${STORE_LABEL[store]}`;
    const verdict = (ok: boolean) => (usable(result) ? ok : false);
    if (result.requests === 0) {
      targets.push({ name: 'scenario ran', scenario: label, wanted: 'ran', measured: 'did not run', pass: false });
      continue;
    }
    if (result.kind === 'single') {
      const ratio = TARGETS.singleCpuRatioToCeiling[store];
      targets.push({
        name: `server CPU per request <= ${fmt(ratio, 1)}× the bare route's`,
        scenario: label,
        wanted: `<= ${fmt(ratio, 1)}×`,
        measured: result.cpuRatioToCeiling === null ? 'no ceiling' : `${fmt(result.cpuRatioToCeiling, 2)}×`,
        pass: result.cpuRatioToCeiling === null ? null : verdict(result.cpuRatioToCeiling <= ratio),
      });
      targets.push({
        name: `p99 < ${TARGETS.singleP99Ms} ms`,
        scenario: label,
        wanted: `< ${TARGETS.singleP99Ms} ms`,
        measured: `${fmt(result.p99Ms)} ms`,
        pass: verdict(result.p99Ms < TARGETS.singleP99Ms),
      });
    } else {
      const wanted = TARGETS.batchRecipientsPerSecond[store];
      targets.push({
        name: `recipients/s >= ${fmt(wanted)}`,
        scenario: label,
        wanted: `>= ${fmt(wanted)}`,
        measured: fmt(result.recipientsPerSecond),
        pass: verdict((result.recipientsPerSecond ?? 0) >= wanted),
      });
    }
    targets.push({
      name: `peak RSS <= ${TARGETS.peakRssMb} MB`,
      scenario: label,
      wanted: `<= ${TARGETS.peakRssMb} MB`,
      measured: `${fmt(result.peakRssMb)} MB`,
      pass: result.peakRssMb === null ? null : verdict(result.peakRssMb <= TARGETS.peakRssMb),
    });
  }
  return targets;
}

function row(result: ScenarioResult): string[] {
  return [
    KIND_LABEL[result.kind],
    result.kind === 'ceiling' ? `(for ${STORE_LABEL[result.store]})` : STORE_LABEL[result.store],
    String(result.connections),
    fmt(result.requestsPerSecond),
    fmt(result.p50Ms),
    fmt(result.p99Ms),
    fmt(result.recipientsPerSecond),
    result.percentOfCeiling === null ? '-' : `${fmt(result.percentOfCeiling, 1)}%`,
    result.cpuRatioToCeiling === null ? '-' : `${fmt(result.cpuRatioToCeiling, 2)}×`,
    fmt(result.peakRssMb),
    fmt(result.serverCpuCores, 2),
    fmt(result.serverCpuUsPerRequest),
    fmt(result.databaseCpuUsPerRequest),
    result.problems.length > 0 && result.requests === 0 ? 'did not run' : String(result.errors),
  ];
}

const HEADER = ['scenario', 'store', 'conns', 'requests/s', 'p50 ms', 'p99 ms', 'recipients/s', '% of ceiling', 'CPU ÷ ceiling', 'peak RSS MB', 'server CPU cores', 'CPU µs/req', 'PostgreSQL CPU µs/req', 'errors'];

export function textTable(results: ScenarioResult[]): string {
  const rows = [HEADER, ...results.map(row)];
  const widths = HEADER.map((_, column) => Math.max(...rows.map((cells) => cells[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(rows[0]!), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

export function targetLines(targets: Target[]): string {
  const mark = (pass: boolean | null) => (pass === null ? 'n/a ' : pass ? 'PASS' : 'FAIL');
  return targets.map((target) => `  ${mark(target.pass)}  ${target.scenario}: ${target.name} (measured ${target.measured})`).join('\n');
}

export function markdown(input: { results: ScenarioResult[]; targets: Target[]; machine: string; settings: string; date: string }): string {
  const escape = (cell: string) => cell.replace(/\|/g, '\\|');
  const table = (header: string[], rows: string[][]) =>
    [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`, ...rows.map((cells) => `| ${cells.map(escape).join(' | ')} |`)].join('\n');
  const mark = (pass: boolean | null) => (pass === null ? 'n/a' : pass ? 'pass' : '**FAIL**');
  return [
    `Measured ${input.date} with \`npm run bench\` on ${input.machine}; ${input.settings}.`,
    '',
    table(HEADER, input.results.map(row)),
    '',
    table(
      ['target', 'scenario', 'measured', 'result'],
      input.targets.map((target) => [target.name, target.scenario, target.measured, mark(target.pass)]),
    ),
  ].join('\n');
}
