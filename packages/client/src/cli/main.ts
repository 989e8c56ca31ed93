/**
 * tms-client: the integrator CLI. `main` takes the arguments and the environment from the bin
 * script, so it is testable in-process and reads no global state.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { TmsError } from '../errors.ts';
import { batchCommand } from './batch.ts';
import { cancelCommand, getCommand, listCommand, oasCommand, quotaCommand, sendCommand, templatesCommand, integerOption, type Values } from './commands.ts';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, createContext, type CliContext } from './context.ts';
import { listenCommand } from './listen.ts';
import type { Io } from './output.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

const GLOBAL_OPTIONS: Options = {
  'api-key': { type: 'string' },
  'base-url': { type: 'string' },
  json: { type: 'boolean' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

interface Command {
  usage: string;
  options: Options;
  run: (ctx: CliContext, positionals: string[], values: Values) => Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  send: {
    usage: 'send --template ID --phone PHONE [--param NAME=VALUE]… [--data JSON] [--tracking-id ID] [--send-at TIME] [--mode plain|hashphone]',
    options: {
      template: { type: 'string' },
      phone: { type: 'string' },
      param: { type: 'string', multiple: true },
      data: { type: 'string' },
      'tracking-id': { type: 'string' },
      'send-at': { type: 'string' },
      mode: { type: 'string' },
    },
    run: sendCommand,
  },
  batch: {
    usage:
      'batch FILE.csv --template ID [--chunk-size N] [--send-time HH:MM] [--mode plain|hashphone] [--journal FILE] [--dry-run] [--quiet] [--forget-unsettled]\n' +
      '        FILE.csv columns: phone,tracking_id,<template params…> (tracking_id may be empty)',
    options: {
      template: { type: 'string' },
      'chunk-size': { type: 'string' },
      'send-time': { type: 'string' },
      mode: { type: 'string' },
      journal: { type: 'string' },
      'dry-run': { type: 'boolean' },
      quiet: { type: 'boolean' },
      'forget-unsettled': { type: 'boolean' },
    },
    run: batchCommand,
  },
  get: { usage: 'get MSG_ID', options: {}, run: getCommand },
  list: {
    usage: 'list [--status S] [--phone P] [--tracking-id ID] [--template ID] [--oa OA_ID] [--from TIME] [--to TIME] [--limit N] [--offset N] [--all]',
    options: {
      status: { type: 'string' },
      phone: { type: 'string' },
      'tracking-id': { type: 'string' },
      template: { type: 'string' },
      oa: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      limit: { type: 'string' },
      offset: { type: 'string' },
      all: { type: 'boolean' },
    },
    run: listCommand,
  },
  cancel: { usage: 'cancel MSG_ID', options: {}, run: cancelCommand },
  templates: { usage: 'templates [--status ENABLE|…] [--oa OA_ID]', options: { status: { type: 'string' }, oa: { type: 'string' } }, run: templatesCommand },
  oas: { usage: 'oas', options: {}, run: oasCommand },
  quota: { usage: 'quota [--oa OA_ID]', options: { oa: { type: 'string' } }, run: quotaCommand },
  listen: { usage: 'listen [--port N] [--host H]', options: { port: { type: 'string' }, host: { type: 'string' } }, run: listenCommand },
};

export const USAGE = `tms-client: send and track template messages through TMS (/api/v1)

Usage: tms-client <command> [options]

Commands:
${Object.values(COMMANDS)
  .map((command) => `  ${command.usage}`)
  .join('\n')}

Global options:
  --api-key KEY      API key (default: $TMS_API_KEY)
  --base-url URL     service address, e.g. https://tms.example.com (default: $TMS_BASE_URL)
  --json             machine-readable output on stdout
  --timeout MS       time allowed per request attempt (default 30000)
  --help             this text

Exit codes: 0 success; 1 the request failed, or some recipients did; 2 wrong command line or input file (nothing sent).
`;

function describeError(error: TmsError): Record<string, unknown> {
  return {
    kind: error.kind,
    type: error.type,
    status: error.status,
    code: error.code,
    message: error.message,
    request_id: error.requestId,
    retry_after: error.retryAfter,
    idempotency_key: error.idempotencyKey,
  };
}

export async function main(argv: string[], env: Record<string, string | undefined>, io: Io = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(USAGE);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr.write(`tms-client: unknown command "${name}"\n\n${USAGE}`);
    return EXIT_USAGE;
  }

  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: rest, options: { ...GLOBAL_OPTIONS, ...command.options }, allowPositionals: true, strict: true }));
  } catch (error) {
    io.stderr.write(`tms-client ${name}: ${(error as Error).message}\nUsage: tms-client ${command.usage}\n`);
    return EXIT_USAGE;
  }
  if (values.help === true) {
    io.stdout.write(`Usage: tms-client ${command.usage}\n`);
    return EXIT_OK;
  }
  const json = values.json === true;

  try {
    const ctx = createContext(io, {
      json,
      apiKey: (typeof values['api-key'] === 'string' ? values['api-key'] : undefined) ?? env.TMS_API_KEY,
      baseUrl: (typeof values['base-url'] === 'string' ? values['base-url'] : undefined) ?? env.TMS_BASE_URL,
      timeoutMs: integerOption(values, 'timeout', 1, 600_000),
    });
    return await command.run(ctx, positionals, values);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`tms-client ${name}: ${error.message}\n`);
      return EXIT_USAGE;
    }
    if (error instanceof TmsError) {
      if (json) io.stdout.write(`${JSON.stringify({ error: describeError(error) }, null, 2)}\n`);
      const where = [error.status ? `HTTP ${error.status}` : error.kind, error.requestId ? `request ${error.requestId}` : null].filter(Boolean).join(', ');
      io.stderr.write(`tms-client ${name}: ${error.message} (${where})\n`);
      return EXIT_FAILED;
    }
    io.stderr.write(`tms-client ${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT_FAILED;
  }
}
