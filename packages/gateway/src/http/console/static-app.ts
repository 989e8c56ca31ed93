import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../services/errors.ts';
import type { App } from '../route-support.ts';

/** The console's built assets (packages/console/dist), beside the gateway's src/ or dist/. */
export const CONSOLE_ASSETS_DIR = fileURLToPath(new URL('../../../../console/dist/', import.meta.url));

/**
 * The console's pages run under a strict policy: scripts, styles and requests only from this origin,
 * no inline script or style element, no plugins, and no framing by any site (clickjacking).
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

function applyConsoleHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', CONSOLE_CONTENT_SECURITY_POLICY);
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cross-origin-opener-policy', 'same-origin');
}

async function fileOf(path: string): Promise<Buffer | null> {
  try {
    return (await stat(path)).isFile() ? await readFile(path) : null;
  } catch {
    return null;
  }
}

/**
 * Serves the console: its files, and index.html for every other path under /console so that the
 * app's own routes (/console/messages/…) load on a reload or from a link. Hashed assets are cached
 * for good; index.html never, so a new build is picked up at once.
 */
export function registerConsoleApp(app: App, assetsDir: string = CONSOLE_ASSETS_DIR): void {
  const root = resolve(assetsDir);
  app.addHook('onRequest', async (request, reply) => {
    if (request.url === '/console' || request.url.startsWith('/console/') || request.url.startsWith('/console?')) applyConsoleHeaders(reply);
  });

  const serve = async (request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => {
    const wanted = request.params['*'] ?? '';
    // The API's unknown paths are API errors, not the app's page.
    if (wanted === 'api' || wanted.startsWith('api/')) throw new ApiError('route_not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
    const path = resolve(root, wanted);
    const inside = path.startsWith(root + sep);
    const file = inside && wanted !== '' ? await fileOf(path) : null;
    if (file) {
      const immutable = wanted.startsWith('assets/');
      reply.header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      return reply.type(CONTENT_TYPES[extname(path)] ?? 'application/octet-stream').send(file);
    }
    const index = await fileOf(join(root, 'index.html'));
    if (!index) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built. Run `npm install` (it builds the console) or `npm run build -w @tms/console`.\n');
    }
    reply.header('cache-control', 'no-cache');
    return reply.type(CONTENT_TYPES['.html']!).send(index);
  };
  app.get('/console', { schema: { hide: true } }, serve);
  app.get('/console/*', { schema: { hide: true } }, serve);
}
