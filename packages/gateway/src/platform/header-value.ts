/**
 * Whether a string can travel as an HTTP header value. Credentials reach the platform as headers
 * (`secret_key`, `access_token`); undici refuses a value with a control character or a character
 * outside Latin-1 and, worse, keeps the pooled connection it had reserved for that request, so a
 * few such values can exhaust the pool for every account of the process. Values are checked here
 * before they are stored (operator verbs) and before every platform call.
 */

/** Why `value` cannot be an HTTP header value, as a phrase that follows its name; null when it can. */
export function headerValueProblem(value: string): string | null {
  if (value.length === 0) return 'is empty';
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    // C0 controls, DEL and C1 controls: HTAB is allowed by HTTP but never belongs in a credential.
    if (code < 0x20 || (code >= 0x7f && code < 0xa0)) {
      return `contains the control character ${codePoint(code)} at position ${index + 1}; only printable characters are allowed`;
    }
    if (code > 0xff) {
      return `contains ${codePoint(value.codePointAt(index) ?? code)} at position ${index + 1}, which an HTTP header cannot carry (only Latin-1 characters can)`;
    }
  }
  if (value.trim() !== value) return 'starts or ends with whitespace';
  return null;
}

function codePoint(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}
