import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/** tsx's ESM loader API: found through its package.json, since resolving 'tsx/esm/api' may give its CommonJS entry, which cannot register a thread's loader. */
function tsxLoaderUrl(): string {
  const tsxDirectory = dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  return pathToFileURL(join(tsxDirectory, 'dist/esm/api/index.mjs')).href;
}

/**
 * Starts a worker thread running the module `name` (without extension) beside `siblingUrl`, the
 * caller's import.meta.url. From a build the module is the compiled .js; from the TypeScript sources
 * (bin/tms.js without a current build, or the tests) the thread needs the same loader, registered per thread.
 */
export function spawnModuleThread(siblingUrl: string, name: string, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  const runsFromSources = siblingUrl.endsWith('.ts');
  const entry = new URL(`./${name}.${runsFromSources ? 'ts' : 'js'}`, siblingUrl);
  if (!runsFromSources) return new Worker(entry, { workerData, resourceLimits });
  const bootstrap = `import(${JSON.stringify(tsxLoaderUrl())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData, resourceLimits });
}
