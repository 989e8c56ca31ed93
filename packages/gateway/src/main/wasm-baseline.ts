import { setFlagsFromString } from 'node:v8';

/**
 * Keeps WebAssembly on V8's baseline compiler (Liftoff) in this process, for every thread.
 *
 * The HTTP client (undici) parses answers with llhttp, compiled to WebAssembly. Once it has parsed
 * a few thousand answers, V8 compiles its one large parse function again with its optimizing
 * compiler, which takes 30 to 37 MB of compiler memory for about half a second: under load, that
 * was the highest memory `tms start` ever held (README, *Benchmarks*). The answers it parses (the
 * platform's and webhook receivers') are a few hundred bytes, and the baseline code parses them
 * with no difference in CPU per message that the benchmark can see. V8 reads the flag when a module
 * is compiled, which is at the first request that goes out, after this runs.
 */
export function keepWebAssemblyOnBaselineCompiler(): void {
  setFlagsFromString('--liftoff-only');
}
