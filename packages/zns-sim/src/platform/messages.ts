/**
 * Accepted messages: their ids, the record the platform keeps (the newest message_retention of them), their
 * delivery (which sends the delivery event) and the control-API views of them.
 */
import { randomFillSync } from 'node:crypto';
import type { OaState } from './accounts.ts';
import { stateChanged, type Platform } from './platform-state.ts';

export interface MessageRecord {
  id: string;
  oa: OaState;
  /** The phone, or the hash of a hashphone send. */
  recipient: string;
  /** The phone as sent (null for a hashphone send), for /message/status's `phone` check. */
  phone: string | null;
  trackingId: string;
  sentTime: number;
  /** 0 = not delivered yet. */
  deliveryTime: number;
  neverDelivered: boolean;
}

export interface MessageView {
  msg_id: string;
  oa_id: string;
  recipient: string;
  tracking_id: string;
  sent_time: number;
  delivery_time: number | null;
  status: -1 | 0 | 1;
  never_delivered: boolean;
}

export interface MessageFilter {
  tracking_id?: string;
  oa_id?: string;
}

/** 20-hex-digit msg_ids cut from a pool of random bytes: one crypto call per thousand sends. */
export class MessageIdSource {
  private readonly pool = Buffer.alloc(10_240);
  private offset = this.pool.length;

  next(): string {
    if (this.offset + 10 > this.pool.length) {
      randomFillSync(this.pool);
      this.offset = 0;
    }
    const id = this.pool.toString('hex', this.offset, this.offset + 10);
    this.offset += 10;
    return id;
  }
}

/** Keeps the message, forgetting the oldest one beyond message_retention. */
export function storeMessage(platform: Platform, message: MessageRecord): void {
  platform.messages.set(message.id, message);
  if (platform.messages.size > platform.settings.message_retention) {
    const oldest = platform.messages.keys().next();
    if (!oldest.done) platform.messages.delete(oldest.value);
  }
}

export function deliverAfter(platform: Platform, message: MessageRecord, delayMs: number): void {
  platform.scheduler.after(delayMs, () => deliver(platform, message));
}

function deliver(platform: Platform, message: MessageRecord): void {
  message.deliveryTime = platform.now();
  stateChanged(platform, false);
  platform.counters.delivered++;
  platform.events.emit({
    app_id: message.oa.app_id,
    oa_id: message.oa.oa_id,
    oa_secret_key: message.oa.oa_secret_key,
    recipient: message.recipient,
    msg_id: message.id,
    delivery_time: message.deliveryTime,
    tracking_id: message.trackingId,
  });
}

function messageView(message: MessageRecord): MessageView {
  return {
    msg_id: message.id,
    oa_id: message.oa.oa_id,
    recipient: message.recipient,
    tracking_id: message.trackingId,
    sent_time: message.sentTime,
    delivery_time: message.deliveryTime > 0 ? message.deliveryTime : null,
    status: message.deliveryTime > 0 ? 1 : 0,
    never_delivered: message.neverDelivered,
  };
}

export function findMessage(platform: Platform, messageId: string): MessageView | null {
  const message = platform.messages.get(messageId);
  return message ? messageView(message) : null;
}

/** Every message the platform knows (what /message/status answers for), oldest first, optionally filtered. */
export function listMessages(platform: Platform, filter: MessageFilter = {}): MessageView[] {
  const views: MessageView[] = [];
  for (const message of platform.messages.values()) {
    if (filter.tracking_id !== undefined && message.trackingId !== filter.tracking_id) continue;
    if (filter.oa_id !== undefined && message.oa.oa_id !== filter.oa_id) continue;
    views.push(messageView(message));
  }
  return views;
}
