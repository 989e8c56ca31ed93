/**
 * A small history-API router for paths under /console. Pages see paths without the base
 * ("/messages/msg_1"); links and navigate() add it.
 */
import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

export const BASE_PATH = '/console';
const CHANGE_EVENT = 'tms:navigate';

export interface AppLocation {
  /** Path under /console, starting with "/". */
  path: string;
  /** The query string including "?" (or ""). */
  search: string;
}

function readLocation(): string {
  return `${window.location.pathname}${window.location.search}`;
}

function subscribe(listener: () => void): () => void {
  window.addEventListener('popstate', listener);
  window.addEventListener(CHANGE_EVENT, listener);
  return () => {
    window.removeEventListener('popstate', listener);
    window.removeEventListener(CHANGE_EVENT, listener);
  };
}

export function toAppPath(pathname: string): string {
  if (pathname === BASE_PATH) return '/';
  if (pathname.startsWith(`${BASE_PATH}/`)) return pathname.slice(BASE_PATH.length);
  return '/';
}

/** "/messages?x=1" → "/console/messages?x=1". */
export function href(to: string): string {
  return `${BASE_PATH}${to.startsWith('/') ? to : `/${to}`}`;
}

export function useLocation(): AppLocation {
  const full = useSyncExternalStore(subscribe, readLocation);
  const queryAt = full.indexOf('?');
  const pathname = queryAt === -1 ? full : full.slice(0, queryAt);
  return { path: toAppPath(pathname), search: queryAt === -1 ? '' : full.slice(queryAt) };
}

export function currentAppLocation(): string {
  return `${toAppPath(window.location.pathname)}${window.location.search}`;
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const target = href(to);
  if (target === readLocation()) return;
  if (options.replace) window.history.replaceState(null, '', target);
  else window.history.pushState(null, '', target);
  window.dispatchEvent(new Event(CHANGE_EVENT));
  window.scrollTo(0, 0);
}

/** A path pattern such as "/messages/:id" against a path: the named parts, or null. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const patternParts = pattern.split('/').filter(Boolean);
  const pathParts = path.split('/').filter(Boolean);
  if (patternParts.length !== pathParts.length) return null;
  const params: Record<string, string> = {};
  for (let index = 0; index < patternParts.length; index += 1) {
    const expected = patternParts[index]!;
    const actual = pathParts[index]!;
    if (expected.startsWith(':')) params[expected.slice(1)] = decodeURIComponent(actual);
    else if (expected !== actual) return null;
  }
  return params;
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

export function Link({ to, onClick, ...rest }: LinkProps) {
  const handleClick = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={href(to)} onClick={handleClick} {...rest} />;
}

/** Only paths inside the app are followed after sign-in, so a crafted ?next cannot leave it. */
export function safeNext(next: string | null): string {
  if (next === null || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  if (next.startsWith('/sign-in') || next.startsWith('/invitations/')) return '/';
  return next;
}
