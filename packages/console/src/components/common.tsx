/** Small building blocks every page uses: alerts, times, money, status badges, the page heading. */
import { useEffect, type ReactNode } from 'react';
import type { ConsoleApiError } from '../api.ts';
import type { DeliveryStatus, MessageStatus } from '../api-types.ts';
import { formatDateTime, formatMoney } from '../format.ts';
import { useI18n, type MessageKey } from '../i18n/index.tsx';

/** The page's <h1>, also the document title. */
export function PageHeading({ children, title }: { children: ReactNode; title: string }) {
  useEffect(() => {
    document.title = `${title} · TMS Console`;
  }, [title]);
  return <h1>{children}</h1>;
}

/** An error's envelope message, announced (role="alert"). */
export function ErrorAlert({ error }: { error: ConsoleApiError | string | null | undefined }) {
  const { t } = useI18n();
  if (error === null || error === undefined) return null;
  if (typeof error === 'string') {
    return (
      <div role="alert" className="alert alert-error">
        {error}
      </div>
    );
  }
  const text = error.type === 'network_error' ? t('error.network') : error.message;
  return (
    <div role="alert" className="alert alert-error">
      {text}
      {error.type !== 'network_error' && error.type !== 'http_error' ? <span className="alert-type"> ({error.type})</span> : null}
    </div>
  );
}

export function Notice({ children, tone = 'info' }: { children: ReactNode; tone?: 'info' | 'success' | 'warning' }) {
  return (
    <div role="status" className={`alert alert-${tone}`}>
      {children}
    </div>
  );
}

export function Loading() {
  const { t } = useI18n();
  return (
    <p className="loading" role="status">
      {t('common.loading')}
    </p>
  );
}

export function DateTime({ value }: { value: string | null | undefined }) {
  const { language } = useI18n();
  if (value === null || value === undefined) return <span className="muted">—</span>;
  return <time dateTime={value}>{formatDateTime(value, language)}</time>;
}

export function Money({ amount }: { amount: number }) {
  return <span className="money">{formatMoney(amount)}</span>;
}

export function Dash({ value }: { value: string | number | null | undefined }) {
  if (value === null || value === undefined || value === '') return <span className="muted">—</span>;
  return <>{value}</>;
}

const MESSAGE_STATUS_KEYS: Record<MessageStatus, MessageKey> = {
  queued: 'status.queued',
  sending: 'status.sending',
  sent: 'status.sent',
  delivered: 'status.delivered',
  failed: 'status.failed',
};

const DELIVERY_STATUS_KEYS: Record<DeliveryStatus, MessageKey> = {
  pending: 'deliveryStatus.pending',
  delivered: 'deliveryStatus.delivered',
  failed: 'deliveryStatus.failed',
  cancelled: 'deliveryStatus.cancelled',
};

export function messageStatusLabel(status: MessageStatus, t: (key: MessageKey) => string): string {
  return t(MESSAGE_STATUS_KEYS[status]);
}

export function deliveryStatusLabel(status: DeliveryStatus, t: (key: MessageKey) => string): string {
  return t(DELIVERY_STATUS_KEYS[status]);
}

export function MessageStatusBadge({ status }: { status: MessageStatus }) {
  const { t } = useI18n();
  return (
    <span className={`badge badge-${status}`} data-status={status}>
      {MESSAGE_STATUS_KEYS[status] ? messageStatusLabel(status, t) : status}
    </span>
  );
}

export function DeliveryStatusBadge({ status }: { status: DeliveryStatus }) {
  const { t } = useI18n();
  return (
    <span className={`badge badge-delivery-${status}`} data-status={status}>
      {DELIVERY_STATUS_KEYS[status] ? deliveryStatusLabel(status, t) : status}
    </span>
  );
}

/** Label/value pairs as a description list. */
export function Details({ items }: { items: [string, ReactNode][] }) {
  return (
    <dl className="details">
      {items.map(([label, value]) => (
        <div key={label} className="details-row">
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
