import { constants, createPublicKey, publicEncrypt } from 'node:crypto';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/index.ts';
import { OA_ID, accessToken, demoSeed, get, post, start } from './helpers.ts';

/** What Zalo expects: RSA-OAEP with SHA-256 as the OAEP hash and SHA-1 for MGF1, base64. */
function forgeEncrypt(publicKeyPem: string, text: string): string {
  const key = forge.pki.publicKeyFromPem(publicKeyPem);
  const bytes = forge.util.encodeUtf8(text);
  const ct = key.encrypt(bytes, 'RSA-OAEP', { md: forge.md.sha256.create(), mgf1: { md: forge.md.sha1.create() } });
  return forge.util.encode64(ct);
}

/** Node's OAEP with oaepHash sha256 uses SHA-256 for MGF1 too: not what Zalo decrypts. */
function nodeEncrypt(publicKeyPem: string, text: string): string {
  return publicEncrypt({ key: publicKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(text)).toString('base64');
}

describe('RSA path', () => {
  let sim: RunningSimulator;
  let token: string;
  let pem: string;
  beforeAll(async () => {
    sim = await start();
    token = await accessToken(sim.url);
    const r = await get(sim.url, '/rsa/key/get', token);
    expect(r.json.error).toBe(0);
    pem = r.json.data.public_key;
  });
  afterAll(() => sim.close());

  it('rsa/key/get returns an SPKI PEM public key', () => {
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n?$/);
    expect(createPublicKey(pem).asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(sim.control.rsaPublicKey(OA_ID)?.pem).toBe(pem);
  });

  it('rsa/key/gen answers -143 when a key exists', async () => {
    expect((await get(sim.url, '/rsa/key/gen', token)).json).toMatchObject({ error: -143, data: null });
  });

  it('decrypts a phone encrypted with OAEP SHA-256 / MGF1 SHA-1 (node-forge) and accepts the send', async () => {
    const r = await post(sim.url, '/rsa/message/template', token, { rsa_phone: forgeEncrypt(pem, '84987654321'), template_id: '250002', template_data: { otp: '4321' }, tracking_id: 'rsa-1' });
    expect(r.json.error).toBe(0);
    expect(Object.keys(r.json.data).sort()).toEqual(['msg_id', 'sent_time']);
    expect(r.json.data.msg_id).toMatch(/^[0-9a-f]{20}$/);
    expect(sim.control.message(r.json.data.msg_id)?.recipient).toBe('84987654321');
    // REDAI alias
    expect((await post(sim.url, '/message/template/rsa', token, { rsa_phone: forgeEncrypt(pem, '84987654321'), template_id: '250002', template_data: { otp: '4321' } })).json.error).toBe(0);
  });

  it('answers -123 for a ciphertext made with MGF1 SHA-256 (Node crypto), proving the mix matters', async () => {
    const r = await post(sim.url, '/rsa/message/template', token, { rsa_phone: nodeEncrypt(pem, '84987654321'), template_id: '250002', template_data: { otp: '4321' } });
    expect(r.json).toEqual({ error: -123, message: 'Giải mã nội dung thông báo RSA thất bại', data: null });
  });

  it('answers -123 for garbage, and -108 for a decrypted phone in the wrong format', async () => {
    for (const rsa_phone of ['not base64 !!', Buffer.from('short').toString('base64'), Buffer.alloc(256, 7).toString('base64')]) {
      expect((await post(sim.url, '/rsa/message/template', token, { rsa_phone, template_id: '250002', template_data: { otp: '4321' } })).json.error).toBe(-123);
    }
    expect((await post(sim.url, '/rsa/message/template', token, { rsa_phone: forgeEncrypt(pem, '0987654321'), template_id: '250002', template_data: { otp: '4321' } })).json.error).toBe(-108);
  });

  it('decrypts encrypted template_data values (auto mode) and checks lengths on the plain text', async () => {
    const ok = await post(sim.url, '/rsa/message/template', token, {
      rsa_phone: forgeEncrypt(pem, '84987654321'),
      template_id: '250001',
      template_data: { customer_name: forgeEncrypt(pem, 'Trần Thị B'), order_code: 'DH-9', amount: forgeEncrypt(pem, '99.000đ') },
      tracking_id: 'rsa-2',
    });
    expect(ok.json.error).toBe(0);
    const long = await post(sim.url, '/rsa/message/template', token, {
      rsa_phone: forgeEncrypt(pem, '84987654321'),
      template_id: '250002',
      template_data: { otp: forgeEncrypt(pem, '12345678901') },
    });
    expect(long.json.error).toBe(-1121);
    const bad = await post(sim.url, '/rsa/message/template', token, {
      rsa_phone: forgeEncrypt(pem, '84987654321'),
      template_id: '250002',
      template_data: { otp: nodeEncrypt(pem, '123456') },
    });
    expect(bad.json.error).toBe(-123);
  });
});

describe('RSA key lifecycle and encoding', () => {
  it('without a key: send -128, key/get -142, key/gen creates one, then -143', async () => {
    const seed = demoSeed();
    (seed.oas[0] as { rsa: unknown }).rsa = null;
    const sim = await start({ seed, settings: { rsa_public_key_encoding: 'der_base64' } });
    try {
      const token = await accessToken(sim.url);
      expect((await post(sim.url, '/rsa/message/template', token, { rsa_phone: 'AAAA', template_id: '250002', template_data: { otp: '4321' } })).json.error).toBe(-128);
      expect((await get(sim.url, '/rsa/key/get', token)).json).toMatchObject({ error: -142, data: null });
      const gen = await get(sim.url, '/rsa/key/gen', token);
      expect(gen.json.error).toBe(0);
      const der = gen.json.data.public_key as string;
      expect(der).toMatch(/^[A-Za-z0-9+/]+=*$/);
      const pem = createPublicKey({ key: Buffer.from(der, 'base64'), format: 'der', type: 'spki' }).export({ type: 'spki', format: 'pem' }).toString();
      expect((await get(sim.url, '/rsa/key/get', token)).json.data.public_key).toBe(der);
      expect((await get(sim.url, '/rsa/key/gen', token)).json.error).toBe(-143);
      const r = await post(sim.url, '/rsa/message/template', token, { rsa_phone: forgeEncrypt(pem, '84987654321'), template_id: '250002', template_data: { otp: '4321' } });
      expect(r.json.error).toBe(0);
    } finally {
      await sim.close();
    }
  });

  it('uses a private key given in the seed', async () => {
    const keys = forge.pki.rsa.generateKeyPair({ bits: 1024, e: 0x10001 });
    const seed = demoSeed();
    (seed.oas[0] as { rsa: unknown }).rsa = { private_key_pem: forge.pki.privateKeyToPem(keys.privateKey) };
    const sim = await start({ seed });
    try {
      const token = await accessToken(sim.url);
      const pub = forge.pki.publicKeyToPem(keys.publicKey);
      const r = await post(sim.url, '/rsa/message/template', token, { rsa_phone: forgeEncrypt(pub, '84987654321'), template_id: '250002', template_data: { otp: '4321' } });
      expect(r.json.error).toBe(0);
    } finally {
      await sim.close();
    }
  });
});
