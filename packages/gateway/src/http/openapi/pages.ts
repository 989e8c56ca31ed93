/**
 * The reference pages, /docs and /admin/docs: Redoc, served by the gateway from the `redoc`
 * package so the pages work offline, with our small script and style beside it. No inline script
 * anywhere, and a Content-Security-Policy that allows only our own files.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const require = createRequire(import.meta.url);
const gzipAsync = promisify(gzip);
const REDOC_VERSION = (require('redoc/package.json') as { version: string }).version;
const REDOC_BUNDLE_PATH = require.resolve('redoc/bundles/redoc.standalone.js');

export const ASSETS_PREFIX = '/docs/assets';
const REDOC_URL = `${ASSETS_PREFIX}/redoc.standalone.js`;
const LOGO_URL = `${ASSETS_PREFIX}/logo.svg`;

/**
 * Redoc's menu footer loads its logo from Redocly's CDN, which an offline gateway cannot reach and
 * the policy forbids; the served bundle points it at our small mark instead (also the favicon).
 */
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const LOCAL_LOGO = '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><rect x="2" y="2" width="12" height="12" rx="2" fill="#8a94a6"/></svg>';

/**
 * Redoc styles its components with inline <style> elements (styled-components), hence
 * 'unsafe-inline' for styles only; its search index runs in a Worker made from a blob: URL.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  // Redoc draws some icons from data: SVGs in its styles.
  "img-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "frame-ancestors 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  // The token form is read by our script; were it ever submitted by the browser, nothing leaves.
  "form-action 'none'",
].join('; ');

const assetUrl = (name: string): URL => new URL(`./assets/${name}`, import.meta.url);

interface RedocBundle {
  plain: string;
  /** The bundle is about 1 MB, a quarter of it gzipped: browsers that accept gzip get that. */
  gzipped: Buffer;
}

/** Read and compressed on first use, once: most gateways never serve their reference. */
let redocBundle: Promise<RedocBundle> | undefined;
function readRedocBundle(): Promise<RedocBundle> {
  redocBundle ??= readFile(REDOC_BUNDLE_PATH, 'utf8').then(async (bundle) => {
    const plain = bundle.replace(REDOC_CDN_LOGO, LOGO_URL);
    return { plain, gzipped: await gzipAsync(plain) };
  });
  return redocBundle;
}

async function sendRedocBundle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const bundle = await readRedocBundle();
  reply.header('vary', 'accept-encoding');
  if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
    return sendAsset(reply.header('content-encoding', 'gzip'), 'text/javascript; charset=utf-8', bundle.gzipped, 'immutable');
  }
  return sendAsset(reply, 'text/javascript; charset=utf-8', bundle.plain, 'immutable');
}

interface Page {
  title: string;
  specUrl: string;
  /** The operator page asks for the token before it fetches its document. */
  tokenForm: boolean;
}

function renderPage(page: Page): string {
  const form = page.tokenForm
    ? `<form id="token-form" autocomplete="off">
<h1>${page.title}</h1>
<label for="operator-token">Operator token</label>
<input id="operator-token" name="operator-token" type="password" required autocomplete="off" spellcheck="false">
<button type="submit">Show the reference</button>
<p id="token-status" role="status"></p>
</form>
`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>
<link rel="icon" href="${LOGO_URL}" type="image/svg+xml">
<link rel="stylesheet" href="${ASSETS_PREFIX}/reference.css">
</head>
<body>
<noscript>This reference needs JavaScript. The OpenAPI document is at <a href="${page.specUrl}">${page.specUrl}</a>.</noscript>
${form}<main id="reference" data-spec-url="${page.specUrl}"></main>
<script src="${REDOC_URL}?v=${REDOC_VERSION}"></script>
<script src="${ASSETS_PREFIX}/reference.js"></script>
</body>
</html>
`;
}

function sendPage(reply: FastifyReply, html: string): FastifyReply {
  return reply
    .header('content-security-policy', DOCS_CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8')
    .send(html);
}

function sendAsset(reply: FastifyReply, type: string, body: string | Buffer, cache: 'immutable' | 'revalidate'): FastifyReply {
  return reply
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', cache === 'immutable' ? 'public, max-age=31536000, immutable' : 'no-cache')
    .type(type)
    .send(body);
}

export function registerReferencePages(app: FastifyInstance, documents: { publicUrl: string; operatorUrl: string }): void {
  const publicPage = renderPage({ title: 'TMS API reference', specUrl: documents.publicUrl, tokenForm: false });
  const operatorPage = renderPage({ title: 'TMS operator API reference', specUrl: documents.operatorUrl, tokenForm: true });
  const script = readFileSync(assetUrl('reference.js'), 'utf8');
  const style = readFileSync(assetUrl('reference.css'), 'utf8');
  const hide = { schema: { hide: true } };

  app.get('/docs', hide, async (_request, reply) => sendPage(reply, publicPage));
  app.get('/admin/docs', hide, async (_request, reply) => sendPage(reply, operatorPage));
  // The bundle's URL carries Redoc's version, so it may be cached for good.
  app.get(REDOC_URL, hide, sendRedocBundle);
  app.get(LOGO_URL, hide, async (_request, reply) => sendAsset(reply, 'image/svg+xml', LOCAL_LOGO, 'revalidate'));
  app.get(`${ASSETS_PREFIX}/reference.js`, hide, async (_request, reply) => sendAsset(reply, 'text/javascript; charset=utf-8', script, 'revalidate'));
  app.get(`${ASSETS_PREFIX}/reference.css`, hide, async (_request, reply) => sendAsset(reply, 'text/css; charset=utf-8', style, 'revalidate'));
}
