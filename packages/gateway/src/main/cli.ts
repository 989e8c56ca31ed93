import pino from 'pino';
import { ADMIN_USAGE, formatForHumans, runAdminCommand } from '../cli/admin-commands.ts';
import { ConfigError, parseConfig, type Config } from '../config/config.ts';
import { requireExistingInstallation } from '../config/data-directory.ts';
import { resolveSecrets } from '../config/secrets.ts';
import { removeAbandonedBackupDownloads } from '../services/admin/database-backup.ts';
import { ensureDemoOwner, ensureDemoWorkspace } from '../services/demo.ts';
import { ApiError } from '../services/errors.ts';
import { findMasterKeyMismatch } from '../services/master-keys.ts';
import { commandLineOperator } from '../services/operator-tokens.ts';
import { LogOutput } from './log-output.ts';
import { createRuntime, type Runtime } from './runtime.ts';
import { startHealthServer, startService, type RunningService } from './server.ts';
import { limitHeapGrowth } from './heap-growth.ts';
import { keepWebAssemblyOnBaselineCompiler } from './wasm-baseline.ts';
import { printStartBanner } from './banner.ts';
import { WriteLock } from '../store/write-lock.ts';
import { loadWorkerThread } from './worker-thread.ts';

const USAGE = `tms <command>

  start      gateway API and workers in one process (embedded SQLite unless DATABASE_URL is set)
  api        the HTTP API only
  worker     the workers only
  migrate    apply database migrations and exit
  admin      operator commands (tms admin --help)

Configuration comes from environment variables; see the README.`;

function loadConfig(): { config: Config; generated: string[]; secretsFile: string | null; adminTokenFromFile: boolean } {
  const resolved = resolveSecrets(parseConfig());
  return { config: resolved.config, generated: resolved.generated, secretsFile: resolved.file, adminTokenFromFile: resolved.adminTokenFromFile };
}

/** A one-off command's log: warnings only, on standard error, so that standard output is the answer alone (--json). */
function commandLog(): pino.Logger {
  return pino({ level: 'warn' }, pino.destination(2));
}

/** How long exiting waits for queued log lines once the service has stopped. */
const LOG_FLUSH_MS = 2000;

/**
 * The most SIGTERM may take: sends in flight finish within the platform deadline (twice, for one
 * that first waits for a token refresh), webhook attempts are cut after their stop grace. Past it
 * the process exits anyway, with code 1; what it still held is recovered like a crashed worker's.
 */
function shutdownDeadlineMs(config: Config): number {
  return Math.max(30_000, 2 * config.zns.timeoutMs + 10_000);
}

function stopOnSignals(service: RunningService, log: pino.Logger, output: LogOutput, deadlineMs: number): void {
  let stopping = false;
  const exit = (code: number): void => {
    void output.flush(LOG_FLUSH_MS).finally(() => process.exit(code));
  };
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, deadline_ms: deadlineMs }, 'shutting down: finishing in-flight work');
    // Whatever hangs (a store that stopped answering, an output nobody reads), the process ends.
    setTimeout(() => {
      log.error({ deadline_ms: deadlineMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, deadlineMs);
    service.stop().then(
      () => exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * A serving process whose master keys cannot read the store's secrets stops before it takes any
 * work (exit 78, as for any configuration error): started, it would fail customers' messages.
 */
async function requireReadableSecrets(runtime: Runtime): Promise<void> {
  let mismatch;
  try {
    mismatch = await findMasterKeyMismatch(runtime.contextFor({ kind: 'operator' }));
  } catch (error) {
    await runtime.close();
    throw error;
  }
  if (!mismatch) return;
  await runtime.close();
  throw new ConfigError('TMS_MASTER_KEY', mismatch.problem);
}

async function serve(roles: { api: boolean; worker: boolean }, withDemo: boolean): Promise<void> {
  const { config, generated, secretsFile, adminTokenFromFile } = loadConfig();
  limitHeapGrowth(config.heapGrowthPercent);
  keepWebAssemblyOnBaselineCompiler();
  // The banner goes through process.stdout: a reader that went away must not crash the service.
  process.stdout.on('error', () => undefined);
  const output = new LogOutput();
  const log = pino({ level: config.logLevel }, output);
  // Both roles in one process: the workers get a thread of their own (see worker-thread.ts).
  const workersInThread = roles.api && roles.worker && config.workerThread;
  const writeLock = workersInThread && config.database.kind === 'sqlite' ? new WriteLock() : null;
  // Only an event loop that serves the API alone fsyncs on itself: see worker-thread-main.ts.
  const walFsyncs = roles.api && (!roles.worker || workersInThread) ? 'adaptive' : 'thread-pool';
  // With a workers' thread, the WAL checkpoints run there (worker-thread-main.ts): a thread of their own would cost memory.
  const walCheckpoints = writeLock ? 'elsewhere' : 'background';
  const runtime = await createRuntime(config, { log, writeLock: writeLock ?? undefined, walCheckpoints, walFsyncs });
  await requireReadableSecrets(runtime);
  const operator = runtime.contextFor({ kind: 'operator' });
  // Before the API takes a request, so every download copy there is one an earlier process left.
  if (roles.api) removeAbandonedBackupDownloads({ ctx: operator, input: {} });
  const demo = withDemo && config.database.kind === 'sqlite' && config.demoSeed ? await ensureDemoWorkspace({ ctx: operator, input: {} }) : null;
  const demoOwner = demo ? await ensureDemoOwner({ ctx: operator, input: { workspaceId: demo.workspaceId } }) : null;
  // The workers' thread loads while the API builds; its loops begin once the API holds the port.
  const loadingThread = workersInThread
    ? loadWorkerThread({
        config,
        writeLock,
        log,
        onFailure: (error) => {
          // Like a crashed worker process: whatever it held is recovered by the next start.
          log.error({ err: error }, "the workers' thread ended; exiting");
          void output.flush(LOG_FLUSH_MS).finally(() => process.exit(1));
        },
      })
    : null;
  // A thread that fails to load is reported where it is awaited, after the API has started.
  loadingThread?.catch(() => undefined);
  const stopLoadingThread = async (): Promise<void> => loadingThread?.then((thread) => thread.stop(), () => undefined);
  // Owned from now on, so a SIGTERM while it loads stops it gracefully before the process exits.
  if (loadingThread) runtime.ownLoop("workers' thread", { stop: stopLoadingThread });
  let service: RunningService;
  let healthUrl: string | null = null;
  try {
    // Without the API, the process still answers probes and Prometheus on its PORT.
    if (!roles.api) healthUrl = await startHealthServer(runtime);
    service = await startService(runtime, { api: roles.api, worker: roles.worker && !workersInThread });
  } catch (error) {
    // Nothing is claimed before the port is taken: the process just exits (main's catch).
    await stopLoadingThread();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new ConfigError('PORT', `${config.port} is already in use on ${config.host} (EADDRINUSE): give each tms process on this machine its own PORT`);
    }
    throw error;
  }
  stopOnSignals(service, log, output, shutdownDeadlineMs(config));
  if (loadingThread) {
    const thread = await loadingThread;
    runtime.metrics.addPeer(thread);
    await thread.begin();
  }
  if (roles.api) printStartBanner({ config, url: service.url!, generated, secretsFile, adminTokenFromFile, demo, demoOwner });
  log.info({ roles, store: runtime.store.dialect, migrations: runtime.appliedMigrations, url: service.url ?? healthUrl }, 'tms started');
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return serve({ api: true, worker: true }, true);
    case 'api':
      requireExistingInstallation(parseConfig(), 'tms api', { database: false });
      return serve({ api: true, worker: false }, false);
    case 'worker':
      requireExistingInstallation(parseConfig(), 'tms worker', { database: false });
      return serve({ api: false, worker: true }, false);
    case 'migrate': {
      requireExistingInstallation(parseConfig(), 'tms migrate', { database: false });
      const runtime = await createRuntime(loadConfig().config, { log: commandLog() });
      console.log(runtime.appliedMigrations.length ? `applied: ${runtime.appliedMigrations.join(', ')}` : 'database is up to date');
      return runtime.close();
    }
    case 'admin': {
      if (rest.length === 0 || rest.includes('--help')) {
        console.log(ADMIN_USAGE);
        return;
      }
      requireExistingInstallation(parseConfig(), 'tms admin', { database: true });
      const runtime = await createRuntime(loadConfig().config, { log: commandLog() });
      try {
        // Only a warning here: these commands are how an operator looks into and repairs such a
        // store (rotate-master-key lists what no key opens; keys create and sender-accounts connect replace it).
        const mismatch = await findMasterKeyMismatch(runtime.contextFor(commandLineOperator())).catch((error: unknown) => {
          console.error(`warning: could not check that the master keys read the store: ${error instanceof Error ? error.message : String(error)}`);
          return null;
        });
        if (mismatch) console.error(`warning: TMS_MASTER_KEY ${mismatch.problem}`);
        const result = await runAdminCommand(runtime.contextFor(commandLineOperator()), rest);
        console.log(rest.includes('--json') ? JSON.stringify(result, null, 2) : formatForHumans(result));
      } finally {
        await runtime.close();
      }
      return;
    }
    default:
      console.log(USAGE);
      if (command !== undefined && command !== 'help' && command !== '--help') process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(78);
  }
  if (error instanceof ApiError) {
    console.error(`error: ${error.message}`);
    process.exit(error.statusCode === 404 ? 4 : 1);
  }
  console.error(error);
  process.exit(1);
});
