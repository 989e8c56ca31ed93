/** The domain's records and enumerations, for layers that may not reach the store directly. */
export {
  MESSAGE_STATUSES,
  TEMPLATE_STATUSES,
  WEBHOOK_DELIVERY_STATUSES,
  type ApiKeyRow,
  type AuditLogRow,
  type ConsoleRole,
  type ConsoleUserRow,
  type LedgerRow,
  type MessageRow,
  type MessageStatus,
  type OperatorTokenRow,
  type SenderAccountRow,
  type TemplateStatus,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WorkspaceRow,
} from '../store/schema.ts';
export type { TemplateWithOaName } from '../store/templates.ts';
export type { ConsoleUserWithWorkspace } from '../store/console-users.ts';
