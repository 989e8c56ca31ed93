/** The `template_data` of a send, checked against the template's params (decrypted first for RSA sends). */
import { isJsonObject } from '../json-object.ts';
import { oaepDecrypt, type RsaKey } from '../rsa.ts';
import type { Settings } from '../seed.ts';
import type { TemplateState } from './templates.ts';

/** Characters as the platform counts them: a surrogate pair (an emoji) is one. */
function countCharacters(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xd800 || code > 0xdbff) count++;
  }
  return count;
}

/** Whether `text` has the length of the base64 of an RSA ciphertext for this key size. */
function looksLikeCiphertext(text: string, modulusBytes: number): boolean {
  const padded = 4 * Math.ceil(modulusBytes / 3);
  const unpadded = Math.ceil((modulusBytes * 4) / 3);
  return text.length === padded || text.length === unpadded;
}

/** 0 when template_data is acceptable, else the ZNS error code. `rsaKey`: the OA's key on an RSA send, else null. */
export function checkTemplateData(template: TemplateState, data: unknown, rsaKey: RsaKey | null, rsaMode: Settings['rsa_template_data']): number {
  if (!isJsonObject(data)) return template.params.length === 0 && (data === undefined || data === null) ? 0 : -111;
  for (const param of template.params) {
    const value = data[param.name];
    if (value === undefined || value === null || value === '') {
      if (param.required) return -1122;
      if (value === null && !param.acceptNull) return -1124;
      continue;
    }
    let text: string;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
    else return -1124;
    if (rsaKey) {
      if (rsaMode === 'encrypted' || (rsaMode === 'auto' && looksLikeCiphertext(text, rsaKey.modulusBytes))) {
        const plain = oaepDecrypt(rsaKey, text);
        if (!plain) return -123;
        text = plain.toString('utf8');
      }
    }
    // UTF-16 length first: it can only overcount, so the exact count is needed only near the limits.
    let length = text.length;
    if (length > param.maxLength || length < param.minLength * 2) length = countCharacters(text);
    if (length > param.maxLength || length < param.minLength) return -1121;
  }
  return 0;
}
