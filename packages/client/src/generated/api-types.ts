/*
 * The public API's types, generated from its OpenAPI document (GET /openapi.json) by
 * `npm run sdk:types`. Do not edit: change the gateway's route schemas and run it again.
 * The SDK's own types (../types.ts) are checked against these (test/types-match-api.test-d.ts).
 */

/** The schemas under components/schemas, by name. */
export interface ApiSchemas {
  DeliveryReport: {
    message_id: string;
    client_req_id: string;
    from: string;
    to: string | null;
    status: 'SUCCESS';
    delivered_at: string;
    tracking_id: string;
  };
  ErrorBody: {
    error: {
      code: number;
      type: 'invalid_request' | 'invalid_webhook_url' | 'invalid_json' | 'invalid_tracking_id' | 'invalid_send_at' | 'invalid_date_range' | 'invalid_template_data' | 'missing_phone' | 'rsa_phone_invalid' | 'daily_quota_exceeded' | 'invalid_idempotency_key' | 'template_not_enabled' | 'sender_account_not_connected' | 'unauthenticated' | 'invalid_credentials' | 'invalid_event_signature' | 'insufficient_balance' | 'account_cap_reached' | 'forbidden_scope' | 'csrf_failed' | 'forbidden_role' | 'workspace_suspended' | 'route_not_found' | 'message_not_found' | 'invitation_not_found' | 'console_user_not_found' | 'template_not_found' | 'sender_account_not_found' | 'workspace_not_found' | 'api_key_not_found' | 'operator_token_not_found' | 'webhook_delivery_not_found' | 'request_timeout' | 'message_not_queued' | 'idempotency_key_in_flight' | 'sender_account_taken' | 'sender_account_changed' | 'console_user_taken' | 'last_owner' | 'template_taken' | 'webhook_delivery_pending' | 'master_key_rotation_incomplete' | 'master_key_mismatch' | 'webhook_delivery_not_redeliverable' | 'payload_too_large' | 'uri_too_long' | 'unsupported_media_type' | 'expectation_failed' | 'idempotency_key_reused' | 'sender_account_refused' | 'template_refused' | 'rate_limited' | 'headers_too_large' | 'internal_error' | 'service_unavailable' | 'platform_unavailable' | 'insufficient_disk_space';
      message: string;
    };
  };
}

/** Each operation of /api/v1 by its operationId: parameters by place, request body, JSON responses by status. */
export interface ApiOperations {
  /** POST /api/v1/messages/{id}/cancel */
  cancelMessage: {
    parameters: {
      path: {
        id: string;
      };
      header: {
        'X-Request-Id'?: string;
        'Idempotency-Key'?: string;
      };
    };
    responses: {
      200: {
        cancelled: true;
        msg_id: string;
      };
      400: ApiSchemas['ErrorBody'];
      401: ApiSchemas['ErrorBody'];
      403: ApiSchemas['ErrorBody'];
      404: ApiSchemas['ErrorBody'];
      409: ApiSchemas['ErrorBody'];
      414: ApiSchemas['ErrorBody'];
      422: ApiSchemas['ErrorBody'];
      429: ApiSchemas['ErrorBody'];
      500: ApiSchemas['ErrorBody'];
      503: ApiSchemas['ErrorBody'];
    };
  };
  /** GET /api/v1/messages/{id} */
  getMessage: {
    parameters: {
      path: {
        id: string;
      };
      header: {
        'X-Request-Id'?: string;
      };
    };
    responses: {
      200: {
        msg_id: string;
        tracking_id: string;
        status: 'queued' | 'sending' | 'sent' | 'delivered' | 'failed';
        phone: string | null;
        carrier: string | null;
        source: string;
        template_id: string;
        oa_id: string;
        provider_msg_id: string | null;
        error_code: number | null;
        error_message: string | null;
        error_reason: string | null;
        scheduled_at: string | null;
        sent_at: string | null;
        delivered_at: string | null;
        failed_at: string | null;
        created_at: string;
      };
      401: ApiSchemas['ErrorBody'];
      403: ApiSchemas['ErrorBody'];
      404: ApiSchemas['ErrorBody'];
      414: ApiSchemas['ErrorBody'];
      429: ApiSchemas['ErrorBody'];
      500: ApiSchemas['ErrorBody'];
      503: ApiSchemas['ErrorBody'];
    };
  };
  /** GET /api/v1/quota */
  getQuota: {
    parameters: {
      query: {
        oa_id?: string;
      };
      header: {
        'X-Request-Id'?: string;
      };
    };
    responses: {
      200: {
        quotas: {
          oa_id: string;
          oa_name: string;
          daily_quota: number;
          remaining: number;
          used: number;
          reset_at: string;
          error: string | null;
        }[];
        count: number;
      };
      400: ApiSchemas['ErrorBody'];
      401: ApiSchemas['ErrorBody'];
      403: ApiSchemas['ErrorBody'];
      404: ApiSchemas['ErrorBody'];
      429: ApiSchemas['ErrorBody'];
      500: ApiSchemas['ErrorBody'];
      503: ApiSchemas['ErrorBody'];
    };
  };
  /** GET /api/v1/messages */
  listMessages: {
    parameters: {
      query: {
        tracking_id?: string;
        phone?: string;
        status?: 'queued' | 'sending' | 'sent' | 'delivered' | 'failed';
        template_id?: string;
        oa_id?: string;
        from?: string;
        to?: string;
        limit?: number;
        offset?: number;
      };
      header: {
        'X-Request-Id'?: string;
      };
    };
    responses: {
      200: {
        messages: {
          msg_id: string;
          tracking_id: string;
          status: 'queued' | 'sending' | 'sent' | 'delivered' | 'failed';
          phone: string | null;
          carrier: string | null;
          source: string;
          template_id: string;
          oa_id: string;
          provider_msg_id: string | null;
          error_code: number | null;
          error_message: string | null;
          error_reason: string | null;
          scheduled_at: string | null;
          sent_at: string | null;
          delivered_at: string | null;
          failed_at: string | null;
          created_at: string;
        }[];
        limit: number;
        offset: number;
        count: number;
        has_more: boolean;
      };
      400: ApiSchemas['ErrorBody'];
      401: ApiSchemas['ErrorBody'];
      403: ApiSchemas['ErrorBody'];
      429: ApiSchemas['ErrorBody'];
      500: ApiSchemas['ErrorBody'];
      503: ApiSchemas['ErrorBody'];
    };
  };
  /** GET /api/v1/oas */
  listOas: {
    parameters: {
      header: {
        'X-Request-Id'?: string;
      };
    };
    responses: {
      200: {
        oas: {
          oa_id: string;
          name: string;
        }[];
        count: number;
      };
      401: ApiSchemas['ErrorBody'];
      403: ApiSchemas['ErrorBody'];
      429: ApiSchemas['ErrorBody'];
      500: ApiSchemas['ErrorBody'];
      503: ApiSchemas['ErrorBody'];
    };
  };
  /** GET /api/v1/templates */
  listTemplates: {
    parameters: {
      query: {
        status?: 'ENABLE' | 'PENDING_REVIEW' | 'REJECT' | 'DISABLE' | 'DELETE';
        oa_id?: string;
      };
      header: {
        'X-Request-Id'?: string;
      };
    };
    responses: {
      200: {
        templates: {
          template_id: string;
          name: string;
          status: 'ENABLE' | 'PENDING_REVIEW' | 'REJECT' | 'DISABLE' | 'DELETE';
          template_type: number;
          oa_id: string;
          oa_name: string;
          preview_url: string;
          price: number;
          params: {
            name: string;
            type: string;
            required: boolean;
            max_length: number;
            min_length: number;
          }[];
        }[];
        count: number;
      };
      400: ApiSchemas['ErrorBody'];
      401: ApiSchemas['ErrorBody'];
      403: ApiSchemas['ErrorBody'];
      429: ApiSchemas['ErrorBody'];
      500: ApiSchemas['ErrorBody'];
      503: ApiSchemas['ErrorBody'];
    };
  };
  /** POST /api/v1/messages/batch */
  sendBatch: {
    parameters: {
      header: {
        'X-Request-Id'?: string;
        'Idempotency-Key'?: string;
      };
    };
    requestBody: {
      template_id: string;
      recipients: {
        phone?: string;
        template_data?: Record<string, string>;
        tracking_id?: string;
      }[];
      send_at?: string;
      mode?: 'plain' | 'hashphone';
    };
    responses: {
      202: {
        accepted: number;
        total: number;
        scheduled_at: string | null;
        results: {
          phone?: string;
          msg_id?: string;
          tracking_id?: string;
          status: 'queued' | 'error';
          error?: string;
        }[];
      };
      400: ApiSchemas['ErrorBody'];
      401: ApiSchemas['ErrorBody'];
      402: ApiSchemas['ErrorBody'];
      403: ApiSchemas['ErrorBody'];
      404: ApiSchemas['ErrorBody'];
      409: ApiSchemas['ErrorBody'];
      413: ApiSchemas['ErrorBody'];
      415: ApiSchemas['ErrorBody'];
      422: ApiSchemas['ErrorBody'];
      429: ApiSchemas['ErrorBody'];
      500: ApiSchemas['ErrorBody'];
      503: ApiSchemas['ErrorBody'];
    };
  };
  /** POST /api/v1/messages/send */
  sendMessage: {
    parameters: {
      header: {
        'X-Request-Id'?: string;
        'Idempotency-Key'?: string;
      };
    };
    requestBody: {
      template_id: string;
      phone: string;
      template_data?: Record<string, string>;
      tracking_id?: string;
      send_at?: string;
      mode?: 'plain' | 'hashphone';
    };
    responses: {
      202: {
        msg_id: string;
        tracking_id: string;
        status: 'queued';
        scheduled_at: string | null;
      };
      400: ApiSchemas['ErrorBody'];
      401: ApiSchemas['ErrorBody'];
      402: ApiSchemas['ErrorBody'];
      403: ApiSchemas['ErrorBody'];
      404: ApiSchemas['ErrorBody'];
      409: ApiSchemas['ErrorBody'];
      413: ApiSchemas['ErrorBody'];
      415: ApiSchemas['ErrorBody'];
      422: ApiSchemas['ErrorBody'];
      429: ApiSchemas['ErrorBody'];
      500: ApiSchemas['ErrorBody'];
      503: ApiSchemas['ErrorBody'];
    };
  };
  /** POST /api/v1/messages/rsa */
  sendRsa: {
    parameters: {
      header: {
        'X-Request-Id'?: string;
        'Idempotency-Key'?: string;
      };
    };
    requestBody: {
      template_id: string;
      recipients: {
        rsa_phone?: string;
        template_data?: Record<string, string>;
        tracking_id?: string;
      }[];
      send_at?: string;
    };
    responses: {
      202: {
        accepted: number;
        total: number;
        scheduled_at: string | null;
        results: {
          phone?: string;
          msg_id?: string;
          tracking_id?: string;
          status: 'queued' | 'error';
          error?: string;
        }[];
      };
      400: ApiSchemas['ErrorBody'];
      401: ApiSchemas['ErrorBody'];
      402: ApiSchemas['ErrorBody'];
      403: ApiSchemas['ErrorBody'];
      404: ApiSchemas['ErrorBody'];
      409: ApiSchemas['ErrorBody'];
      413: ApiSchemas['ErrorBody'];
      415: ApiSchemas['ErrorBody'];
      422: ApiSchemas['ErrorBody'];
      429: ApiSchemas['ErrorBody'];
      500: ApiSchemas['ErrorBody'];
      503: ApiSchemas['ErrorBody'];
    };
  };
}

/** The requests the service makes to your webhook URL (the delivery report), by name. */
export interface ApiWebhooks {
  /** POST to your webhook URL */
  deliveryReport: {
    parameters: {
      header: {
        'X-Gateway-Signature': string;
        'X-Gateway-Delivery-Id': string;
        'X-Gateway-Attempt': number;
        'User-Agent': string;
      };
    };
    requestBody: ApiSchemas['DeliveryReport'];
    responses: Record<string, never>;
  };
}
