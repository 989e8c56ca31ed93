/** Buttons with a little behaviour: copy to the clipboard, confirm before a change, paging, downloads. */
import { useEffect, useRef, useState } from 'react';
import { useI18n } from '../i18n/index.tsx';

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const { t } = useI18n();
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      // Clipboard access is refused outside secure contexts: the text stays selectable next to the button.
      setState('failed');
    }
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setState('idle'), 2500);
  };

  return (
    <span className="copy">
      <button type="button" className="button-secondary" onClick={() => void copy()}>
        {label ?? t('common.copy')}
      </button>
      <span role="status" className="copy-status">
        {state === 'copied' ? t('common.copied') : state === 'failed' ? t('common.copyFailed') : ''}
      </span>
    </span>
  );
}

/** A change that needs a second, explicit click ("Revoke" → "Yes, revoke" / "Cancel"). */
export function ConfirmButton({
  label,
  confirmLabel,
  question,
  onConfirm,
  disabled,
  danger = true,
}: {
  label: string;
  confirmLabel: string;
  question: string;
  onConfirm(): void | Promise<void>;
  disabled?: boolean;
  danger?: boolean;
}) {
  const { t } = useI18n();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);

  if (!asking) {
    return (
      <button type="button" className={danger ? 'button-danger' : 'button-secondary'} disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span className="confirm-question">{question}</span>
      <button
        ref={confirmRef}
        type="button"
        className={danger ? 'button-danger' : ''}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" className="button-secondary" disabled={busy} onClick={() => setAsking(false)}>
        {t('common.cancel')}
      </button>
    </span>
  );
}

export function Pager({
  offset,
  limit,
  count,
  hasMore,
  onChange,
}: {
  offset: number;
  limit: number;
  count: number;
  hasMore: boolean;
  onChange(offset: number): void;
}) {
  const { t } = useI18n();
  const first = count === 0 ? 0 : offset + 1;
  return (
    <nav className="pager" aria-label={t('common.paging')}>
      <button type="button" className="button-secondary" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))}>
        {t('common.previous')}
      </button>
      <span className="pager-range">{t('common.range', { first, last: offset + count })}</span>
      <button type="button" className="button-secondary" disabled={!hasMore} onClick={() => onChange(offset + limit)}>
        {t('common.next')}
      </button>
    </nav>
  );
}

/** Saves text as a file through a Blob URL (nothing leaves the page). */
export function downloadText(fileName: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = fileName;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  // Revoked a moment later: some browsers read the URL after click() returns.
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
