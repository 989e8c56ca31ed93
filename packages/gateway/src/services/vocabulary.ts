/** The domain's enumerations, for layers that may not reach the store directly. */
export { MESSAGE_STATUSES, TEMPLATE_STATUSES, type MessageStatus, type TemplateStatus } from '../store/schema.ts';
