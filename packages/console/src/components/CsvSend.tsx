/**
 * Many messages from a CSV file: the server checks the file (csv-preview, which charges nothing),
 * this shows the per-row problems, the cost, the balance and today's remaining quota, and only
 * then sends the valid rows (csv-send.ts), with a progress bar and a per-row result to download.
 */
import { useId, useState } from 'react';
import { api, type ConsoleApiError } from '../api.ts';
import type { CsvPreview, SendMode, Template } from '../api-types.ts';
import { resultsCsv, sendCsvRows, type RowResult, type RowStatus } from '../csv-send.ts';
import { fileStamp, formatNumber } from '../format.ts';
import { useI18n, type MessageKey } from '../i18n/index.tsx';
import { Link } from '../router.tsx';
import { toApiError } from '../use-api.ts';
import { downloadText } from './actions.tsx';
import { Dash, DateTime, Details, ErrorAlert, Money, Notice } from './common.tsx';

/** Tables show this many rows; the downloaded CSV has them all. */
const SHOWN_ROWS = 200;

const STATUS_KEYS: Record<RowStatus, MessageKey> = {
  queued: 'csv.status.queued',
  scheduled: 'csv.status.scheduled',
  error: 'csv.status.error',
  invalid: 'csv.status.invalid',
  over_quota: 'csv.status.over_quota',
  not_sent: 'csv.status.not_sent',
};

export function CsvSend({ template, mode, apiKeyId }: { template: Template; mode: SendMode | undefined; apiKeyId: string | undefined }) {
  const { t, language } = useI18n();
  const fileId = useId();
  const fileHint = useId();
  const [fileName, setFileName] = useState<string | null>(null);
  const [preview, setPreview] = useState<CsvPreview | null>(null);
  const [checking, setChecking] = useState(false);
  const [error, setError] = useState<ConsoleApiError | null>(null);
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [results, setResults] = useState<RowResult[] | null>(null);
  const sending = progress !== null && results === null;

  const columns = ['phone', ...template.params.map((param) => param.name), 'tracking_id'];

  const choose = async (file: File | undefined) => {
    setPreview(null);
    setResults(null);
    setProgress(null);
    setError(null);
    if (!file) return;
    setFileName(file.name);
    setChecking(true);
    try {
      const csv = await file.text();
      setPreview(await api.post<CsvPreview>('/messages/csv-preview', { template_id: template.template_id, csv }));
    } catch (caught) {
      setError(toApiError(caught));
    } finally {
      setChecking(false);
    }
  };

  const sendable = preview ? Math.min(preview.valid_rows, Math.max(0, preview.quota.remaining)) : 0;
  const overQuota = preview ? preview.valid_rows - sendable : 0;
  const sendableCost = preview ? sendable * preview.unit_price : 0;

  const send = async () => {
    if (!preview) return;
    setError(null);
    setProgress({ done: 0, total: sendable });
    try {
      const outcome = await sendCsvRows({
        templateId: template.template_id,
        rows: preview.rows,
        remaining: preview.quota.remaining,
        mode,
        apiKeyId,
        onProgress: (done, total) => setProgress({ done, total }),
      });
      setResults(outcome);
    } catch (caught) {
      setError(toApiError(caught));
      setProgress(null);
    }
  };

  const counts = results
    ? results.reduce<Record<RowStatus, number>>(
        (tally, result) => ({ ...tally, [result.status]: tally[result.status] + 1 }),
        { queued: 0, scheduled: 0, error: 0, invalid: 0, over_quota: 0, not_sent: 0 },
      )
    : null;
  const problemRows = preview ? preview.rows.filter((row) => row.problem !== null) : [];

  return (
    <div className="csv-send">
      <p>{t('csv.intro')}</p>
      <p>
        {t('csv.columns')} <code>{columns.join(',')}</code>{' '}
        <button
          type="button"
          className="button-secondary"
          onClick={() => downloadText(`template-${template.template_id}.csv`, `\uFEFF${columns.join(',')}\r\n`, 'text/csv;charset=utf-8')}
        >
          {t('csv.downloadHeader')}
        </button>
      </p>
      <div className="field">
        <label htmlFor={fileId}>{t('csv.file')}</label>
        <input
          id={fileId}
          type="file"
          accept=".csv,text/csv"
          aria-describedby={fileHint}
          disabled={sending || checking}
          onChange={(event) => void choose(event.target.files?.[0])}
        />
        <span id={fileHint} className="hint">
          {t('csv.fileHint')}
        </span>
      </div>
      {checking ? <p role="status">{t('csv.checking')}</p> : null}
      <ErrorAlert error={error} />
      {preview ? (
        <section aria-labelledby="csv-preview-heading" className="csv-preview">
          <h3 id="csv-preview-heading">{t('csv.previewTitle', { file: fileName ?? '' })}</h3>
          <Details
            items={[
              [t('csv.totalRows'), formatNumber(preview.rows.length, language)],
              [t('csv.validRows'), <span data-testid="csv-valid-rows">{formatNumber(preview.valid_rows, language)}</span>],
              [t('csv.invalidRows'), <span data-testid="csv-invalid-rows">{formatNumber(preview.invalid_rows, language)}</span>],
              [t('csv.unitPrice'), <Money amount={preview.unit_price} />],
              [t('csv.totalCost'), <Money amount={preview.total_cost} />],
              [t('csv.balance'), <Money amount={preview.balance} />],
              [
                t('csv.quotaRemaining'),
                <>
                  {formatNumber(preview.quota.remaining, language)} / {formatNumber(preview.quota.daily_quota, language)} ({preview.quota.name}) ·{' '}
                  {t('quota.resetsAt')} <DateTime value={preview.quota.resets_at} />
                </>,
              ],
            ]}
          />
          {overQuota > 0 ? <Notice tone="warning">{t('csv.overQuotaWarning', { count: formatNumber(overQuota, language) })}</Notice> : null}
          {sendableCost > preview.balance ? <Notice tone="warning">{t('csv.balanceWarning')}</Notice> : null}
          {problemRows.length > 0 ? (
            <>
              <h4>{t('csv.problems')}</h4>
              <div className="table-wrap">
                <table data-testid="csv-problems">
                  <caption className="visually-hidden">{t('csv.problems')}</caption>
                  <thead>
                    <tr>
                      <th scope="col">{t('csv.row')}</th>
                      <th scope="col">{t('messages.phone')}</th>
                      <th scope="col">{t('messages.trackingId')}</th>
                      <th scope="col">{t('csv.problem')}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {problemRows.slice(0, SHOWN_ROWS).map((row) => (
                      <tr key={row.row}>
                        <th scope="row">{row.row}</th>
                        <td className="mono">
                          <Dash value={row.phone} />
                        </td>
                        <td className="mono">
                          <Dash value={row.tracking_id} />
                        </td>
                        <td>{row.problem}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {problemRows.length > SHOWN_ROWS ? <p className="muted">{t('csv.moreRows', { shown: SHOWN_ROWS, total: problemRows.length })}</p> : null}
            </>
          ) : (
            <Notice tone="success">{t('csv.noProblems')}</Notice>
          )}
          {results === null ? (
            <p>
              <button type="button" disabled={sendable === 0 || sending} onClick={() => void send()}>
                {t('csv.send', { count: formatNumber(sendable, language) })}
              </button>{' '}
              <span className="muted">
                {t('csv.sendCost')} <Money amount={sendableCost} />
              </span>
            </p>
          ) : null}
        </section>
      ) : null}
      {progress ? (
        <div className="field">
          <label htmlFor="csv-progress">{t('csv.progress', { done: formatNumber(progress.done, language), total: formatNumber(progress.total, language) })}</label>
          <progress id="csv-progress" max={Math.max(progress.total, 1)} value={progress.done} />
        </div>
      ) : null}
      {results && counts ? (
        <section aria-labelledby="csv-results-heading">
          <h3 id="csv-results-heading">{t('csv.results')}</h3>
          <Notice tone={counts.error + counts.not_sent > 0 ? 'warning' : 'success'}>
            <span data-testid="csv-summary">
              {(Object.keys(counts) as RowStatus[])
                .filter((status) => counts[status] > 0)
                .map((status) => `${t(STATUS_KEYS[status])}: ${formatNumber(counts[status], language)}`)
                .join(' · ')}
            </span>
          </Notice>
          <p>
            <button
              type="button"
              onClick={() => downloadText(`results-${template.template_id}-${fileStamp()}.csv`, resultsCsv(results), 'text/csv;charset=utf-8')}
            >
              {t('csv.downloadResults')}
            </button>
          </p>
          <div className="table-wrap">
            <table data-testid="csv-results">
              <caption className="visually-hidden">{t('csv.results')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('csv.row')}</th>
                  <th scope="col">{t('messages.phone')}</th>
                  <th scope="col">{t('messages.trackingId')}</th>
                  <th scope="col">{t('messages.status')}</th>
                  <th scope="col">{t('messages.id')}</th>
                  <th scope="col">{t('messages.error')}</th>
                </tr>
              </thead>
              <tbody>
                {results.slice(0, SHOWN_ROWS).map((result) => (
                  <tr key={result.row} data-status={result.status}>
                    <th scope="row">{result.row}</th>
                    <td className="mono">
                      <Dash value={result.phone} />
                    </td>
                    <td className="mono">
                      <Dash value={result.tracking_id} />
                    </td>
                    <td>{t(STATUS_KEYS[result.status])}</td>
                    <td className="mono">
                      {result.msg_id ? <Link to={`/messages/${encodeURIComponent(result.msg_id)}`}>{result.msg_id}</Link> : <Dash value={null} />}
                    </td>
                    <td>
                      <Dash value={result.error} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {results.length > SHOWN_ROWS ? <p className="muted">{t('csv.moreRows', { shown: SHOWN_ROWS, total: results.length })}</p> : null}
        </section>
      ) : null}
    </div>
  );
}
