import { useState } from 'react';
import type { ActivityList } from '../api-types.ts';
import { Pager } from '../components/actions.tsx';
import { Dash, DateTime, ErrorAlert, Loading, Notice, PageHeading } from '../components/common.tsx';
import { useI18n } from '../i18n/index.tsx';
import { useSignedIn } from '../session.tsx';
import { useApi } from '../use-api.ts';

const LIMIT = 50;

function Json({ value, label }: { value: Record<string, unknown> | null; label: string }) {
  if (value === null) return <Dash value={null} />;
  return (
    <details>
      <summary>{label}</summary>
      <pre className="code small">{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

export function ActivityPage() {
  const { t } = useI18n();
  const { permissions } = useSignedIn();
  const [offset, setOffset] = useState(0);
  const activity = useApi<ActivityList>(permissions.isOwner ? '/activity' : null, { limit: LIMIT, offset });

  return (
    <section>
      <PageHeading title={t('activity.title')}>{t('activity.title')}</PageHeading>
      {!permissions.isOwner ? <Notice>{t('activity.ownersOnly')}</Notice> : null}
      <ErrorAlert error={activity.error} />
      {activity.loading && !activity.data ? <Loading /> : null}
      {activity.data && activity.data.entries.length === 0 ? <p className="empty">{t('activity.none')}</p> : null}
      {activity.data && activity.data.entries.length > 0 ? (
        <>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">{t('activity.title')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('activity.at')}</th>
                  <th scope="col">{t('activity.actor')}</th>
                  <th scope="col">{t('activity.action')}</th>
                  <th scope="col">{t('activity.target')}</th>
                  <th scope="col">{t('activity.before')}</th>
                  <th scope="col">{t('activity.after')}</th>
                </tr>
              </thead>
              <tbody>
                {activity.data.entries.map((entry) => (
                  <tr key={entry.id}>
                    <th scope="row">
                      <DateTime value={entry.at} />
                    </th>
                    <td>
                      {entry.actor.kind === 'operator' ? t('activity.operator') : (entry.actor.email ?? entry.actor.id ?? '—')}
                    </td>
                    <td className="mono">{entry.action}</td>
                    <td className="mono">
                      <Dash value={entry.target} />
                    </td>
                    <td>
                      <Json value={entry.before} label={t('activity.show')} />
                    </td>
                    <td>
                      <Json value={entry.after} label={t('activity.show')} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager offset={offset} limit={LIMIT} count={activity.data.entries.length} hasMore={activity.data.has_more} onChange={setOffset} />
        </>
      ) : null}
    </section>
  );
}
