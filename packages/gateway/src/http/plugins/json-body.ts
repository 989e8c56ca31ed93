import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from '../../services/errors.ts';

/**
 * Arrays and objects may nest at most this deep in a request body. Our largest documents need 4;
 * without a bound, 100,000 nested arrays parse fine and then overflow the stack of whatever walks
 * them recursively (JSON.stringify of the idempotency fingerprint, the response serialiser).
 */
export const MAX_BODY_NESTING_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * One pass over the text, before it is parsed, so a hostile body costs neither a parse nor a
 * recursion: counts brackets and braces outside strings. On text that is not JSON the answer does
 * not matter, the parser refuses it.
 */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      depth += 1;
      if (depth > limit) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth -= 1;
    }
  }
  return false;
}

/** A place in a parsed document, linked to its parent so a path is only spelled out when needed. */
interface Place {
  value: unknown;
  key: string | number | null;
  parent: Place | null;
}

function pathOf(place: Place, root: string): string {
  const parts: string[] = [];
  for (let current: Place | null = place; current && current.key !== null; current = current.parent) {
    parts.push(typeof current.key === 'number' ? `[${current.key}]` : `.${current.key}`);
  }
  return root + parts.reverse().join('');
}

const NUL = '\u0000';

/**
 * Whether findUnstorableValue would refuse the value: the same walk without the paths, allocating
 * nothing per value, since nearly every request passes it. Strings and keys are searched for NUL
 * only when `mayHoldNul`.
 */
function holdsUnstorableValue(value: unknown, mayHoldNul: boolean): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'number') {
      if (!Number.isFinite(current)) return true;
    } else if (typeof current === 'string') {
      if (mayHoldNul && current.includes(NUL)) return true;
    } else if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
    } else if (typeof current === 'object' && current !== null) {
      const fields = current as Record<string, unknown>;
      for (const key in fields) {
        if (mayHoldNul && key.includes(NUL)) return true;
        stack.push(fields[key]);
      }
    }
  }
  return false;
}

/**
 * What no column can take, found without recursion: a number that is not finite (JSON `1e400`
 * parses to Infinity, which integer schemas accept and PostgreSQL or a later read refuses) and
 * the NUL character, in a value or a key (PostgreSQL text cannot hold it). Returns why the value
 * is refused, or null. `mayHoldNul` false skips the search for NUL (parsed JSON whose text has no
 * `\u0000` escape cannot hold one).
 */
export function findUnstorableValue(value: unknown, root: string, mayHoldNul = true): string | null {
  if (!holdsUnstorableValue(value, mayHoldNul)) return null;
  const stack: Place[] = [{ value, key: null, parent: null }];
  for (let place = stack.pop(); place; place = stack.pop()) {
    const current = place.value;
    if (typeof current === 'string') {
      if (current.includes(NUL)) return `${pathOf(place, root)} must not contain the NUL character (U+0000)`;
    } else if (typeof current === 'number') {
      if (!Number.isFinite(current)) return `${pathOf(place, root)} is a number out of range`;
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => stack.push({ value: item, key: index, parent: place }));
    } else if (typeof current === 'object' && current !== null) {
      for (const [key, item] of Object.entries(current)) {
        if (key.includes(NUL)) return `${pathOf(place, root)} has a field name with the NUL character (U+0000)`;
        stack.push({ value: item, key, parent: place });
      }
    }
  }
  return null;
}

/**
 * Parses a JSON request body through secure-json-parse (no prototype poisoning) and refuses what
 * the gateway could not store or walk safely: nesting deeper than MAX_BODY_NESTING_DEPTH,
 * non-finite numbers, NUL characters. Throws the catalogued ApiError.
 */
export function parseJsonBody(text: string, prototypeKeys: 'error' | 'remove'): unknown {
  if (nestsDeeperThan(text, MAX_BODY_NESTING_DEPTH)) {
    throw new ApiError('invalid_request', `request body nests arrays and objects more than ${MAX_BODY_NESTING_DEPTH} levels deep`);
  }
  let parsed: unknown;
  try {
    parsed = secureJson.parse(text, undefined, { protoAction: prototypeKeys, constructorAction: prototypeKeys });
  } catch {
    throw new ApiError('invalid_json', 'request body is not valid JSON');
  }
  // JSON can carry NUL only as the escape \u0000: an unescaped control character is not JSON.
  const problem = findUnstorableValue(parsed, 'body', text.includes('\\u0000'));
  if (problem) throw new ApiError('invalid_request', problem);
  return parsed;
}

/**
 * JSON bodies through parseJsonBody. An empty body counts as no body, so bodiless POSTs such as
 * cancel work whatever Content-Type the client library adds. Fastify's other built-in parser
 * (text/plain) is removed: a non-empty body that is not JSON is 415.
 *
 * Path parameters and query values get the NUL rule of bodies too, before validation, so every
 * route refuses them alike on both stores.
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, parseJsonBody(text, 'error'));
    } catch (error) {
      done(error as ApiError, undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
    done(new ApiError('unsupported_media_type', 'request body must be JSON (Content-Type: application/json)'), undefined);
  });
  app.addHook('preValidation', async (request) => {
    const problem = findUnstorableValue(request.params, 'path') ?? findUnstorableValue(request.query, 'query');
    if (problem) throw new ApiError('invalid_request', problem);
  });
}
