/** GET /message/status: whether a message the OA sent has reached the phone. */
import { znsError } from '../errors.ts';
import type { OaState } from './accounts.ts';
import { normalizePhone } from './phone.ts';
import type { Platform } from './platform-state.ts';

const MESSAGE_ID = /^[0-9a-f]{20}$/;

export function messageStatus(platform: Platform, oa: OaState, messageId: string | undefined, phone: string | undefined): object {
  if (!messageId || !MESSAGE_ID.test(messageId)) return znsError(-107);
  const message = platform.messages.get(messageId);
  // A phone that does not match hides the message, as if it were someone else's.
  if (!message || message.oa !== oa || (phone !== undefined && phone !== '' && message.phone !== null && normalizePhone(phone, platform.settings.phone_format) !== message.phone)) {
    return { error: 0, message: 'Success', data: { delivery_time: null, message: 'The message does not exist', status: -1 } };
  }
  if (message.deliveryTime > 0) {
    return { error: 0, message: 'Success', data: { delivery_time: String(message.deliveryTime), message: "The message was delivered to the user's phone", status: 1 } };
  }
  return { error: 0, message: 'Success', data: { delivery_time: null, message: 'The message was sent to Zalo but has not been delivered to the user yet', status: 0 } };
}
