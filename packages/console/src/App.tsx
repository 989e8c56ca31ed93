/** Routes: signed-out pages, then every page of the signed-in console inside the layout. */
import { Fragment, useEffect, type ReactNode } from 'react';
import { onUnauthenticated } from './api.ts';
import { Loading } from './components/common.tsx';
import { Layout, PlainLayout } from './components/Layout.tsx';
import { useI18n } from './i18n/index.tsx';
import { AcceptInvitationPage } from './pages/AcceptInvitation.tsx';
import { ActivityPage } from './pages/Activity.tsx';
import { ApiKeysPage } from './pages/ApiKeys.tsx';
import { MessagePage } from './pages/Message.tsx';
import { MessagesPage } from './pages/Messages.tsx';
import { NotFoundPage } from './pages/NotFound.tsx';
import { OverviewPage } from './pages/Overview.tsx';
import { SendPage } from './pages/Send.tsx';
import { SenderAccountsPage } from './pages/SenderAccounts.tsx';
import { SignInPage } from './pages/SignIn.tsx';
import { TeamPage } from './pages/Team.tsx';
import { TemplatesPage } from './pages/Templates.tsx';
import { WalletPage } from './pages/Wallet.tsx';
import { WebhookDeliveriesPage } from './pages/WebhookDeliveries.tsx';
import { WebhookDeliveryPage } from './pages/WebhookDelivery.tsx';
import { currentAppLocation, matchPath, navigate, useLocation } from './router.tsx';
import { useSession } from './session.tsx';

type Route = [pattern: string, render: (params: Record<string, string>) => ReactNode];

const ROUTES: Route[] = [
  ['/', () => <OverviewPage />],
  ['/messages', () => <MessagesPage />],
  ['/messages/:id', ({ id }) => <MessagePage id={id!} />],
  ['/send', () => <SendPage />],
  ['/templates', () => <TemplatesPage />],
  ['/sender-accounts', () => <SenderAccountsPage />],
  ['/api-keys', () => <ApiKeysPage />],
  ['/webhook-deliveries', () => <WebhookDeliveriesPage />],
  ['/webhook-deliveries/:id', ({ id }) => <WebhookDeliveryPage id={id!} />],
  ['/wallet', () => <WalletPage />],
  ['/team', () => <TeamPage />],
  ['/activity', () => <ActivityPage />],
];

function signInPathFor(location: string): string {
  return location === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(location)}`;
}

export function App() {
  const { path } = useLocation();
  const { session, signedOut } = useSession();
  const { t } = useI18n();

  // Any 401 ends the session here too; the sign-in page brings the user back to where they were.
  useEffect(() => {
    onUnauthenticated(() => {
      const location = currentAppLocation();
      signedOut();
      if (!location.startsWith('/sign-in') && !location.startsWith('/invitations/')) navigate(signInPathFor(location), { replace: true });
    });
    return () => onUnauthenticated(null);
  }, [signedOut]);

  const invitation = matchPath('/invitations/:token', path);
  const onSignIn = path === '/sign-in';
  const needsSignIn = session === null && !invitation && !onSignIn;

  useEffect(() => {
    if (needsSignIn) navigate(signInPathFor(currentAppLocation()), { replace: true });
  }, [needsSignIn]);

  if (invitation) {
    return (
      <PlainLayout>
        <AcceptInvitationPage token={invitation.token!} />
      </PlainLayout>
    );
  }
  if (onSignIn) {
    return (
      <PlainLayout>
        <SignInPage />
      </PlainLayout>
    );
  }
  if (!session) {
    return (
      <PlainLayout>
        <h1 className="visually-hidden">{t('app.console')}</h1>
        <Loading />
      </PlainLayout>
    );
  }
  for (const [pattern, render] of ROUTES) {
    const params = matchPath(pattern, path);
    if (params) return <Layout><Fragment key={path}>{render(params)}</Fragment></Layout>;
  }
  return (
    <Layout>
      <NotFoundPage />
    </Layout>
  );
}
