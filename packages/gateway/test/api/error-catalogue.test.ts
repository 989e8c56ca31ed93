/**
 * The error catalogue itself, and the copies of it that must not drift: the SDK's TmsErrorType
 * union and docs/errors.md. The HTTP side (each type provoked for real) is error-types.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TMS_ERROR_TYPES } from '../../../client/src/errors.ts';
import { ERROR_DOCS_FILE, renderErrorCatalogueMarkdown } from '../../src/services/error-docs.ts';
import { ERROR_CATALOGUE, ERROR_TYPES, recipientError } from '../../src/services/errors.ts';

describe('error catalogue', () => {
  it.each(ERROR_TYPES)('%s is snake_case, a 4xx or 5xx status, with a meaning and an action', (type) => {
    const entry = ERROR_CATALOGUE[type];
    expect(type).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
    expect(entry.status).toBeGreaterThanOrEqual(400);
    expect(entry.status).toBeLessThan(600);
    expect(entry.meaning.trim()).not.toBe('');
    expect(entry.action.trim()).not.toBe('');
  });

  it('builds per-recipient errors as the type, a colon and the explanation', () => {
    expect(recipientError('missing_phone', 'recipient has no phone number')).toBe('missing_phone: recipient has no phone number');
  });

  it("matches the SDK's TmsErrorType list exactly (packages/client/src/errors.ts)", () => {
    expect([...TMS_ERROR_TYPES].sort()).toEqual([...ERROR_TYPES].sort());
    expect(new Set(TMS_ERROR_TYPES).size).toBe(TMS_ERROR_TYPES.length);
  });

  it(`has ${ERROR_DOCS_FILE} generated from the current catalogue`, () => {
    const written = readFileSync(new URL(`../../../../${ERROR_DOCS_FILE}`, import.meta.url), 'utf8');
    expect(written === renderErrorCatalogueMarkdown(), `${ERROR_DOCS_FILE} is out of date: run \`npm run docs:errors\` and commit the result`).toBe(true);
  });
});
