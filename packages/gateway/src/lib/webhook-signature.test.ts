import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhookBody } from './webhook-signature.ts';

describe('signWebhookBody', () => {
  it('is the lowercase hex HMAC-SHA256 of the exact bytes, keyed with the API key', () => {
    const body = Buffer.from('{"message_id":"msg_1","to":"Nguyễn"}', 'utf8');
    const expected = createHmac('sha256', 'tms_live_key').update(body).digest('hex');
    expect(signWebhookBody(body, 'tms_live_key')).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes with one byte of the body or another key', () => {
    const signature = signWebhookBody(Buffer.from('{"a":1}'), 'k1');
    expect(signWebhookBody(Buffer.from('{"a": 1}'), 'k1')).not.toBe(signature);
    expect(signWebhookBody(Buffer.from('{"a":1}'), 'k2')).not.toBe(signature);
  });
});
