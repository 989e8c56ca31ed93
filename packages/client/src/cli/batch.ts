/**
 * `tms-client batch FILE.csv --template ID`: validates every row against the template first, then
 * sends with sendLarge (today's quota now, the rest scheduled for the following days), journaling
 * each chunk so that a rerun with the same file sends only what was not accepted.
 */
import { readFileSync } from 'node:fs';
import { TmsError } from '../errors.ts';
import { DEFAULT_CHUNK_SIZE, MAX_BATCH_SIZE, type SendLargeOutcome } from '../send-large.ts';
import type { BatchResponse, SendMode, Template } from '../types.ts';
import { CsvError } from './csv.ts';
import { EXIT_FAILED, EXIT_OK, UsageError, type CliContext } from './context.ts';
import { integerOption, requiredOption, stringOption, type Values } from './commands.ts';
import { Journal, rowKeys, type AcceptedRow, type PendingChunk } from './journal.ts';
import { ProgressBar, table } from './output.ts';
import { readRecipientsFile, type RecipientRow } from './recipients-file.ts';

/** Idempotency records live 24 hours at the service; resend an unsettled chunk only well inside that. */
const REPLAY_WINDOW_MS = 23 * 60 * 60 * 1000;
const SHOWN_PROBLEMS = 20;

interface RowResult {
  line: number;
  phone: string;
  tracking_id: string | null;
  status: 'queued' | 'scheduled' | 'error' | 'already_accepted';
  msg_id: string | null;
  scheduled_at: string | null;
  error: string | null;
}

async function findTemplate(ctx: CliContext, templateId: string): Promise<Template> {
  const { templates } = await ctx.client().templates.list();
  const template = templates.find((candidate) => candidate.template_id === templateId);
  if (!template) throw new UsageError(`template ${templateId} is not in this workspace (see tms-client templates)`);
  if (template.status !== 'ENABLE') throw new UsageError(`template ${templateId} is ${template.status}; only ENABLE templates can be sent`);
  return template;
}

function acceptedRows(chunkRows: string[], response: BatchResponse): AcceptedRow[] {
  const accepted: AcceptedRow[] = [];
  chunkRows.forEach((row, position) => {
    const item = response.results[position];
    if (item?.status === 'queued' && item.msg_id !== undefined) accepted.push({ row, msg_id: item.msg_id, scheduled_at: response.scheduled_at });
  });
  return accepted;
}

/**
 * A chunk journaled as sent but never answered (the process died): send the same body with the same
 * key. If the service had accepted it, it answers with the stored response and queues nothing new.
 */
async function settleUnsettled(ctx: CliContext, journal: Journal, unsettled: PendingChunk[], forget: boolean): Promise<void> {
  for (const chunk of unsettled) {
    if (Date.now() - chunk.at > REPLAY_WINDOW_MS) {
      if (!forget) {
        throw new UsageError(
          `${journal.path} holds a chunk of ${chunk.rows.length} recipients sent on ${new Date(chunk.at).toISOString()} whose answer never arrived, ` +
            `older than the service's 24-hour idempotency window, so resending it could send twice. Check those recipients ` +
            `(tms-client list --from …), then rerun with --forget-unsettled to send the ones still missing.`,
        );
      }
      journal.done(chunk.key, []);
      continue;
    }
    try {
      const response = await ctx.client().messages.batch(chunk.body, { idempotencyKey: chunk.key });
      journal.done(chunk.key, acceptedRows(chunk.rows, response));
    } catch (error) {
      // A refused request changed nothing (only successes are stored): its rows are simply sent again.
      if (error instanceof TmsError && !error.outcomeUnknown) journal.done(chunk.key, []);
      else throw error;
    }
  }
}

type Counts = Record<RowResult['status'], number>;

function humanSummary(results: RowResult[], counts: Counts, journalPath: string, stoppedBy: TmsError | null): string {
  const lines: string[] = [];
  lines.push(
    `${results.length} recipients: ${counts.queued} queued now, ${counts.scheduled} scheduled, ${counts.already_accepted} already accepted earlier, ${counts.error} errors`,
  );
  const byDay = new Map<string, number>();
  for (const result of results) if (result.status === 'scheduled' && result.scheduled_at) byDay.set(result.scheduled_at, (byDay.get(result.scheduled_at) ?? 0) + 1);
  for (const [at, count] of byDay) lines.push(`  ${count} scheduled for ${at}`);
  const errors = results.filter((result) => result.status === 'error');
  if (errors.length > 0) {
    lines.push('errors:');
    lines.push(
      table(
        ['LINE', 'PHONE', 'TRACKING_ID', 'ERROR'],
        errors.slice(0, SHOWN_PROBLEMS).map((result) => [result.line, result.phone, result.tracking_id, result.error]),
      ).trimEnd(),
    );
    if (errors.length > SHOWN_PROBLEMS) lines.push(`… and ${errors.length - SHOWN_PROBLEMS} more (--json lists them all)`);
  }
  if (stoppedBy) lines.push(`stopped: ${stoppedBy.message}. Fix it and run the same command again: accepted recipients are not sent twice.`);
  else if (counts.error > 0) lines.push('Run the same command again to retry the recipients with errors: accepted ones are not sent twice.');
  lines.push(`journal: ${journalPath}`);
  return `${lines.join('\n')}\n`;
}

export async function batchCommand(ctx: CliContext, positionals: string[], values: Values): Promise<number> {
  if (positionals.length !== 1 || !positionals[0]) throw new UsageError('expected one CSV file: tms-client batch FILE.csv --template ID');
  const file = positionals[0];
  const templateId = requiredOption(values, 'template');
  const chunkSize = integerOption(values, 'chunk-size', 1, MAX_BATCH_SIZE) ?? DEFAULT_CHUNK_SIZE;
  const mode = stringOption(values, 'mode');
  if (mode !== undefined && mode !== 'plain' && mode !== 'hashphone') throw new UsageError('--mode must be plain or hashphone');
  const sendTimeOfDay = stringOption(values, 'send-time');
  if (sendTimeOfDay !== undefined && !/^([01]\d|2[0-3]):[0-5]\d$/.test(sendTimeOfDay)) throw new UsageError('--send-time must be HH:MM (Vietnam time)');
  const journalPath = stringOption(values, 'journal') ?? `${file}.journal`;

  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const template = await findTemplate(ctx, templateId);
  let parsed: ReturnType<typeof readRecipientsFile>;
  try {
    parsed = readRecipientsFile(text, template);
  } catch (error) {
    if (error instanceof CsvError) throw new UsageError(`${file}: ${error.message}`);
    throw error;
  }
  if (parsed.problems.length > 0) {
    const shown = parsed.problems.slice(0, SHOWN_PROBLEMS).map((problem) => `  ${problem}`);
    if (parsed.problems.length > SHOWN_PROBLEMS) shown.push(`  … and ${parsed.problems.length - SHOWN_PROBLEMS} more`);
    throw new UsageError(`${file} does not match template ${templateId}; nothing was sent:\n${shown.join('\n')}`);
  }
  const rows: RecipientRow[] = parsed.rows;
  const keys = rowKeys(templateId, rows.map((row) => row.recipient));

  if (values['dry-run'] === true) {
    ctx.print({ file, template_id: templateId, recipients: rows.length, valid: true }, () => `${file}: ${rows.length} recipients, all valid for template ${templateId} (dry run: nothing sent)\n`);
    return EXIT_OK;
  }

  const journal = Journal.load(journalPath);
  try {
    await settleUnsettled(ctx, journal, journal.unsettled(), values['forget-unsettled'] === true);
    const todo = rows.map((_, index) => index).filter((index) => !journal.accepted.has(keys[index]!));
    const bar = values.quiet === true ? null : new ProgressBar(ctx.io.stderr, todo.length);
    const report = await ctx.client().sendLarge({
      templateId,
      oaId: template.oa_id,
      recipients: todo.map((index) => rows[index]!.recipient),
      chunkSize,
      ...(mode ? { mode: mode as SendMode } : {}),
      ...(sendTimeOfDay ? { sendTimeOfDay } : {}),
      beforeChunk: (chunk) => journal.pending(chunk.idempotencyKey, chunk.indexes.map((i) => keys[todo[i]!]!), chunk.body),
      afterChunk: (chunk, outcome) => {
        const chunkRows = chunk.indexes.map((i) => keys[todo[i]!]!);
        if ('response' in outcome) journal.done(chunk.idempotencyKey, acceptedRows(chunkRows, outcome.response));
        // Unknown outcome: stays pending, so the next run settles it with the same key.
        else if (!outcome.error.outcomeUnknown) journal.done(chunk.idempotencyKey, []);
      },
      onProgress: (progress) => bar?.update(progress.done, `queued ${progress.queued}, scheduled ${progress.scheduled}, errors ${progress.errors} (day ${progress.day})`),
    });
    bar?.finish();

    const outcomeByRow = new Map<number, SendLargeOutcome>();
    report.results.forEach((outcome, position) => outcomeByRow.set(todo[position]!, outcome));
    const results: RowResult[] = rows.map((row, index) => {
      const base = { line: row.line, phone: row.recipient.phone, tracking_id: row.recipient.tracking_id ?? null };
      const outcome = outcomeByRow.get(index);
      if (!outcome) {
        const earlier = journal.accepted.get(keys[index]!)!;
        return { ...base, status: 'already_accepted', msg_id: earlier.msg_id, scheduled_at: earlier.scheduled_at, error: null };
      }
      if (outcome.status === 'error') return { ...base, status: 'error', msg_id: null, scheduled_at: null, error: outcome.error };
      return { ...base, status: outcome.status, msg_id: outcome.msg_id, scheduled_at: outcome.scheduled_at, error: null };
    });
    const counts: Counts = { queued: 0, scheduled: 0, already_accepted: 0, error: 0 };
    for (const result of results) counts[result.status] += 1;
    const summary = {
      file,
      template_id: templateId,
      total: results.length,
      queued: counts.queued,
      scheduled: counts.scheduled,
      already_accepted: counts.already_accepted,
      errors: counts.error,
      days: report.days,
      quota: report.quota,
      stopped_by: report.stoppedBy ? { kind: report.stoppedBy.kind, type: report.stoppedBy.type, status: report.stoppedBy.status, message: report.stoppedBy.message } : null,
      journal: journal.path,
      results,
    };
    ctx.print(summary, () => humanSummary(results, counts, journal.path, report.stoppedBy));
    return counts.error === 0 ? EXIT_OK : EXIT_FAILED;
  } finally {
    journal.close();
  }
}
