/**
 * Where a process spends its CPU: reads V8 .cpuprofile files (node --cpu-prof, or TMS_BENCH_CPU_PROF=1
 * in `npm run bench`) and prints self time grouped by area (our code, the database driver, HTTP,
 * JSON, garbage collection…) and the heaviest functions.
 *
 *   node packages/gateway/bin/run-ts.js packages/gateway/bench/profile-summary.ts bench-results/profiles/dispatch-sqlite-0ms
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Ordered: the first rule whose pattern matches the frame's file (or name) names its area. */
const AREAS: [string, RegExp][] = [
  ['garbage collection', /^\(garbage collector\)$/],
  ['idle', /^\((idle|program)\)$/],
  // better-sqlite3 runs statements in native code, which the profile charges to its JavaScript caller.
  ['SQLite (better-sqlite3)', /better-sqlite3|store\/sqlite-dialect\.|^fsync$/],
  ['PostgreSQL driver (pg)', /node_modules\/(pg|pg-protocol|pg-types|pg-pool)\//],
  ['Kysely (query building)', /node_modules\/kysely\//],
  ['HTTP client (undici)', /node_modules\/undici\/|node:internal\/deps\/undici/],
  ['logging (pino)', /node_modules\/(pino|sonic-boom|thread-stream)/],
  ['TMS gateway code', /packages\/gateway\/(src|dist)\//],
  ['Node networking', /node:(net|internal\/stream|internal\/streams|internal\/net|stream|internal\/js_stream)/],
  ['other Node internals', /^node:/],
  ['other dependencies', /node_modules\//],
];

function areaOf(frame: ProfileNode['callFrame']): string {
  const subject = frame.url || frame.functionName;
  for (const [name, pattern] of AREAS) if (pattern.test(subject) || pattern.test(frame.functionName)) return name;
  if (frame.functionName === 'JSON.parse' || frame.functionName === 'stringify' || frame.functionName === 'parse') return 'JSON';
  return frame.url ? 'other' : 'V8 and native (no file)';
}

function readProfiles(path: string): Profile[] {
  const files = statSync(path).isDirectory()
    ? readdirSync(path).filter((name) => name.endsWith('.cpuprofile')).map((name) => join(path, name))
    : [path];
  return files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as Profile);
}

function summarise(profiles: Profile[]): void {
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const profile of profiles) {
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    profile.samples.forEach((nodeId, index) => {
      const micros = profile.timeDeltas[index] ?? 0;
      const frame = nodes.get(nodeId)!.callFrame;
      const area = areaOf(frame);
      if (area === 'idle') return;
      total += micros;
      byArea.set(area, (byArea.get(area) ?? 0) + micros);
      const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*node_modules\//, '').replace(/^.*packages\//, '')}:${frame.lineNumber + 1}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    });
  }
  const share = (micros: number) => `${((micros / total) * 100).toFixed(1).padStart(5)}%`;
  console.log(`busy CPU: ${(total / 1e6).toFixed(2)} s in ${profiles.length} profile(s)\n\nself time by area:`);
  for (const [area, micros] of [...byArea].sort((a, b) => b[1] - a[1])) console.log(`  ${share(micros)}  ${area}`);
  console.log('\nheaviest functions (self time):');
  for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${share(micros)}  ${name}`);
}

const target = process.argv[2];
if (!target) {
  console.error('usage: profile-summary.ts <.cpuprofile file or directory>');
  process.exit(64);
}
summarise(readProfiles(target));
