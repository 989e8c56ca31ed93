/**
 * The one story every example of the reference tells: the shop "Cửa hàng Hoa Sen" confirms order
 * DH-20261124-001 to Nguyễn Văn An. Shared so that ids, phones and amounts agree across operations.
 */
export const EXAMPLE = {
  workspaceId: 'ws_01KAT2Z7X4C8V6B2N1M3Q5R7T9',
  workspaceName: 'Cửa hàng Hoa Sen',
  apiKeyId: 'key_01KAT30A1B2C3D4E5F6G7H8J9K',
  apiKey: 'tms_live_okYXSto5K_Ap6Kc3ZDGZeTVDtdXdfXRfW7uEFKw7gkQ',
  apiKeyPrefix: 'tms_live_okYXSt',
  oaId: '4318269720189301001',
  oaName: 'Cửa hàng Hoa Sen',
  orderTemplateId: '250001',
  orderTemplateName: 'Xác nhận đơn hàng',
  otpTemplateId: '250002',
  messageId: 'msg_01KAT3M5Q8ZJ7Y4V2N6R9C1D0E',
  secondMessageId: 'msg_01KAT3M5Q8ZJ7Y4V2N6R9C1D0F',
  providerMessageId: 'b6f0dcbb6321ca3e126e',
  deliveryId: 'dlv_01KAT3P2W6S8D0F2G4H6J8K0M2',
  ledgerEntryId: 'led_01KAT31B7N5M3K1H9G7F5D3S1A',
  phoneLocal: '0912345678',
  phone: '84912345678',
  secondPhoneLocal: '0987654321',
  secondPhone: '84987654321',
  trackingId: 'DH-20261124-001',
  orderData: { customer_name: 'Nguyễn Văn An', order_code: 'DH-20261124-001', amount: '1.250.000đ' },
  secondOrderData: { customer_name: 'Trần Thị Bình', order_code: 'DH-20261124-002', amount: '480.000đ' },
  otpData: { otp: '482913' },
  /** VND per message of the order template. */
  price: 300,
  createdAt: '2026-11-24T02:15:30.125Z',
  sentAt: '2026-11-24T02:15:31.042Z',
  deliveredAt: '2026-11-24T02:15:33.518Z',
  webhookUrl: 'https://hoasen.vn/webhooks/tms',
  /** Base64 of RSA-OAEP ciphertexts (2048-bit key) of two numbers, as the RSA send takes them. */
  rsaPhones: [
    't7dSOYKGwEXdujT5Vsgsn6C28OM9ydNEOugy/huoLVsk0hEG8yHRE+Jd9hPpQ1AEfr7IhUd1mB2bbJXbTmzVcFEI9+eax/jEZ099Ii/X8d2mrf55qxkJSoplt+TEu1eaKGs5WVzjSIxA+n7e3SVXdSM9UWg372aP9Su3fSXvh4Jt735L80T6Xw1a0VyDINyubXAWXf7r3iJv/Z2Rue8el0MY7oY3qCz0TJpvtNDaKAa/wz0PGIVNvhNlhQcZr0ZG2u5DkZn7z/uCMwD2Wccrp12WK3bUrxMoOPugSNncBuqImNkBia00OSYqgkpIjDcdpaXdrBr1M3PQoYI7/NYgwA==',
    'tmNwzIr1WIABSsclGp6xV2lrgizq8vZscCxvYdaaLUvrSm/nB/G2hKcI/tOvB7T6ei/Q6iTiADCHP78JDC5apNs2Zf4cyn+Q044cQLCgOlpgdutbqsn/QUEqlv2GI2BnLVqPA3amcaTNIlPhrStIAnyxNBFQQaAn6rwtQyZHc7piZBY5bxBoUUKRpC73VLiYurFGf3/1JjlsG/cxdeGZ8Hre7d9Ar3uG6EjijUuhEf4nk4BUhqL5si3Kt51xbQ2degJsbaLZc6QD6ZAwhu9Fw2nAoavx7dKyyFUePc6GNZt7Q2teSBpZDgWUaVRPTQL1esB0+rpH7ZJs85j44ZFPqQ==',
  ],
} as const;

/** The order template as GET /api/v1/templates shows it (the demo workspace's 250001). */
export const ORDER_TEMPLATE = {
  template_id: EXAMPLE.orderTemplateId,
  name: EXAMPLE.orderTemplateName,
  status: 'ENABLE',
  template_type: 1,
  oa_id: EXAMPLE.oaId,
  oa_name: EXAMPLE.oaName,
  preview_url: 'https://account.zalo.cloud/znspreview/hoasen-order',
  price: EXAMPLE.price,
  params: [
    { name: 'customer_name', type: 'STRING', required: true, max_length: 30, min_length: 1 },
    { name: 'order_code', type: 'STRING', required: true, max_length: 30, min_length: 1 },
    { name: 'amount', type: 'STRING', required: true, max_length: 20, min_length: 1 },
  ],
} as const;

export const OTP_TEMPLATE = {
  template_id: EXAMPLE.otpTemplateId,
  name: 'Mã xác thực OTP',
  status: 'ENABLE',
  template_type: 2,
  oa_id: EXAMPLE.oaId,
  oa_name: EXAMPLE.oaName,
  preview_url: 'https://account.zalo.cloud/znspreview/hoasen-otp',
  price: 250,
  params: [{ name: 'otp', type: 'STRING', required: true, max_length: 10, min_length: 4 }],
} as const;

/** Message records as GET /api/v1/messages/{id} and the list show them. */
export const MESSAGE_RECORDS = {
  delivered: {
    msg_id: EXAMPLE.messageId,
    tracking_id: EXAMPLE.trackingId,
    status: 'delivered',
    phone: EXAMPLE.phone,
    carrier: 'Viettel',
    source: 'api',
    template_id: EXAMPLE.orderTemplateId,
    oa_id: EXAMPLE.oaId,
    provider_msg_id: EXAMPLE.providerMessageId,
    error_code: null,
    error_message: null,
    error_reason: null,
    scheduled_at: null,
    sent_at: EXAMPLE.sentAt,
    delivered_at: EXAMPLE.deliveredAt,
    failed_at: null,
    created_at: EXAMPLE.createdAt,
  },
  failed: {
    msg_id: EXAMPLE.secondMessageId,
    tracking_id: 'DH-20261124-004',
    status: 'failed',
    phone: '84912345000',
    carrier: 'Viettel',
    source: 'api',
    template_id: EXAMPLE.orderTemplateId,
    oa_id: EXAMPLE.oaId,
    provider_msg_id: null,
    error_code: -118,
    error_message: 'Zalo account not existed',
    error_reason: 'Tài khoản Zalo không tồn tại hoặc đã bị vô hiệu hoá',
    scheduled_at: null,
    sent_at: null,
    delivered_at: null,
    failed_at: '2026-11-24T02:16:02.377Z',
    created_at: '2026-11-24T02:16:01.904Z',
  },
  scheduled: {
    msg_id: 'msg_01KAT3M5Q8ZJ7Y4V2N6R9C1D0G',
    tracking_id: 'DH-20261124-005',
    status: 'queued',
    phone: EXAMPLE.secondPhone,
    carrier: 'Viettel',
    source: 'api',
    template_id: EXAMPLE.orderTemplateId,
    oa_id: EXAMPLE.oaId,
    provider_msg_id: null,
    error_code: null,
    error_message: null,
    error_reason: null,
    scheduled_at: '2026-11-25T02:00:00.000Z',
    sent_at: null,
    delivered_at: null,
    failed_at: null,
    created_at: '2026-11-24T02:17:45.610Z',
  },
} as const;

/** The delivery report of the examples: the webhook's example body and the operator's stored copy of it. */
export const EXAMPLE_DELIVERY_REPORT = {
  message_id: EXAMPLE.messageId,
  client_req_id: EXAMPLE.trackingId,
  from: EXAMPLE.oaId,
  to: EXAMPLE.phone,
  status: 'SUCCESS',
  delivered_at: EXAMPLE.deliveredAt,
  tracking_id: EXAMPLE.providerMessageId,
} as const;
