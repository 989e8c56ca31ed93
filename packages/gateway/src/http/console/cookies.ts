import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.ts';

export const SESSION_COOKIE = 'tms_console_session';

/** The value of one cookie of the request, if it is there. */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}

/**
 * The session cookie: HttpOnly (scripts cannot read it), SameSite=Strict (other sites' pages do not
 * send it), scoped to /console, and Secure whenever the console is reached over https.
 */
function sessionCookie(config: Config, request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' || (config.console.publicUrl?.startsWith('https://') ?? false);
  return [`${SESSION_COOKIE}=${value}`, 'Path=/console', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeSeconds}`, ...(secure ? ['Secure'] : [])].join('; ');
}

export function setSessionCookie(reply: FastifyReply, config: Config, token: string, expiresAt: number, now: number): void {
  reply.header('set-cookie', sessionCookie(config, reply.request, token, Math.max(0, Math.floor((expiresAt - now) / 1000))));
}

export function clearSessionCookie(reply: FastifyReply, config: Config): void {
  reply.header('set-cookie', sessionCookie(config, reply.request, '', 0));
}
