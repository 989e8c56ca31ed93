/** The frame of every signed-in page: header (workspace, language, account menu), navigation, main. */
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useI18n, type MessageKey } from '../i18n/index.tsx';
import { href, Link, navigate, useLocation } from '../router.tsx';
import { permissionsOf, useSession } from '../session.tsx';
import { LanguageSwitcher } from './LanguageSwitcher.tsx';

interface NavItem {
  to: string;
  label: MessageKey;
  ownerOnly?: boolean;
}

const NAV: NavItem[] = [
  { to: '/', label: 'nav.overview' },
  { to: '/messages', label: 'nav.messages' },
  { to: '/send', label: 'nav.send' },
  { to: '/templates', label: 'nav.templates' },
  { to: '/sender-accounts', label: 'nav.senderAccounts' },
  { to: '/api-keys', label: 'nav.apiKeys' },
  { to: '/webhook-deliveries', label: 'nav.webhookDeliveries' },
  { to: '/wallet', label: 'nav.wallet' },
  { to: '/team', label: 'nav.team' },
  { to: '/activity', label: 'nav.activity', ownerOnly: true },
];

function isCurrent(item: string, path: string): boolean {
  if (item === '/') return path === '/';
  return path === item || path.startsWith(`${item}/`);
}

function AccountMenu() {
  const { t } = useI18n();
  const { session, signOut } = useSession();
  const [open, setOpen] = useState(false);
  const menuRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    const close = (event: MouseEvent | KeyboardEvent) => {
      if (event instanceof KeyboardEvent && event.key !== 'Escape') return;
      if (event instanceof MouseEvent && menuRef.current?.contains(event.target as Node)) return;
      setOpen(false);
    };
    document.addEventListener('mousedown', close);
    document.addEventListener('keydown', close);
    return () => {
      document.removeEventListener('mousedown', close);
      document.removeEventListener('keydown', close);
    };
  }, [open]);

  if (!session) return null;
  const leave = async (everywhere: boolean) => {
    setOpen(false);
    await signOut(everywhere).catch(() => undefined);
    navigate('/sign-in', { replace: true });
  };
  return (
    <div className="account-menu" ref={menuRef}>
      <button type="button" className="account-button" aria-expanded={open} aria-controls="account-menu-items" onClick={() => setOpen(!open)}>
        <span className="account-email">{session.user.email}</span>
        <span className="account-role">{t(`role.${session.user.role}`)}</span>
      </button>
      {open ? (
        <ul id="account-menu-items" className="account-items">
          <li>
            <button type="button" onClick={() => void leave(false)}>
              {t('account.signOut')}
            </button>
          </li>
          <li>
            <button type="button" onClick={() => void leave(true)}>
              {t('account.signOutEverywhere')}
            </button>
          </li>
        </ul>
      ) : null}
    </div>
  );
}

export function Layout({ children }: { children: ReactNode }) {
  const { t } = useI18n();
  const { session } = useSession();
  const { path } = useLocation();
  const isOwner = session ? permissionsOf(session.user.role).isOwner : false;

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        {t('nav.skip')}
      </a>
      <header className="app-header">
        <a className="brand" href={href('/')} onClick={(event) => {
          event.preventDefault();
          navigate('/');
        }}>
          TMS <span className="brand-sub">{t('app.console')}</span>
        </a>
        {session ? <span className="workspace-name" title={session.workspace.id}>{session.workspace.name}</span> : null}
        <div className="header-tools">
          <LanguageSwitcher />
          <AccountMenu />
        </div>
      </header>
      <div className="app-body">
        <nav className="app-nav" aria-label={t('nav.label')}>
          <ul>
            {NAV.filter((item) => !item.ownerOnly || isOwner).map((item) => (
              <li key={item.to}>
                <Link to={item.to} aria-current={isCurrent(item.to, path) ? 'page' : undefined}>
                  {t(item.label)}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" className="app-main" tabIndex={-1}>
          {children}
          <p className="time-note">{t('app.timeNote')}</p>
        </main>
      </div>
    </div>
  );
}

/** The frame of the signed-out pages (sign-in, invitation). */
export function PlainLayout({ children }: { children: ReactNode }) {
  const { t } = useI18n();
  return (
    <div className="app app-plain">
      <header className="app-header">
        <span className="brand">
          TMS <span className="brand-sub">{t('app.console')}</span>
        </span>
        <div className="header-tools">
          <LanguageSwitcher />
        </div>
      </header>
      <main id="main" className="plain-main">
        {children}
      </main>
    </div>
  );
}
