/** `npm run docs:errors`: writes docs/errors.md from the error catalogue. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_DOCS_FILE, renderErrorCatalogueMarkdown } from '../services/error-docs.ts';

const target = fileURLToPath(new URL(`../../../../${ERROR_DOCS_FILE}`, import.meta.url));
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, renderErrorCatalogueMarkdown());
console.log(`wrote ${ERROR_DOCS_FILE}`);
