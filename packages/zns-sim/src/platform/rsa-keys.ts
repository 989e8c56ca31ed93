/** Each OA's RSA key pair for RSA sends: /rsa/key/get, /rsa/key/gen and the control-API read of the public key. */
import { znsError } from '../errors.ts';
import { generateRsaKey, type RsaKey } from '../rsa.ts';
import type { OaState } from './accounts.ts';
import { accountOr404, stateChanged, type Platform } from './platform-state.ts';

function publicKeyText(platform: Platform, key: RsaKey): string {
  return platform.settings.rsa_public_key_encoding === 'pem' ? key.publicKeyPem : key.publicKeyDerBase64;
}

/** GET /rsa/key/get. */
export function getRsaKey(platform: Platform, oa: OaState): object {
  if (!oa.rsaKey) return znsError(-142);
  return { error: 0, message: 'Success', data: { public_key: publicKeyText(platform, oa.rsaKey) } };
}

/** GET or POST /rsa/key/gen: a first key pair for the OA, stored before it is answered. */
export async function generateOaRsaKey(platform: Platform, oa: OaState): Promise<object> {
  if (oa.rsaKey || oa.generatingRsaKey) return znsError(-143);
  oa.generatingRsaKey = true;
  let key: RsaKey;
  try {
    key = await generateRsaKey(platform.settings.rsa_key_bits);
    oa.rsaKey = key;
    stateChanged(platform, true);
  } catch {
    oa.rsaKey = null;
    return znsError(-129);
  } finally {
    oa.generatingRsaKey = false;
  }
  return { error: 0, message: 'Success', data: { public_key: publicKeyText(platform, key) } };
}

/** The RSA public key of the OA in both encodings (for tests and clients that need it out of band). */
export function rsaPublicKey(platform: Platform, oaId: string): { pem: string; der_base64: string } | null {
  const oa = accountOr404(platform, oaId);
  return oa.rsaKey ? { pem: oa.rsaKey.publicKeyPem, der_base64: oa.rsaKey.publicKeyDerBase64 } : null;
}
