/**
 * The SDK's public types (src/types.ts) against the types generated from the service's OpenAPI
 * document (src/generated/api-types.ts, `npm run sdk:types`). Checked by the typecheck, not run:
 * a failing line reads "Type 'false' does not satisfy the constraint 'true'" and names the type
 * that drifted. Change src/types.ts to match the API, not the generated file.
 *
 * Responses must be identical to the API's. Requests may differ only where the SDK is deliberately
 * stricter or friendlier, and each such difference is spelled out below.
 */
import type { ApiOperations, ApiSchemas, ApiWebhooks } from '../src/generated/api-types.ts';
import type { TmsErrorType } from '../src/errors.ts';
import type {
  BatchRecipient,
  BatchRequest,
  BatchResponse,
  BatchResultItem,
  CancelResponse,
  DeliveryReport,
  ErrorBody,
  ListMessagesQuery,
  ListTemplatesQuery,
  MessageList,
  MessageRecord,
  MessageStatus,
  QuotaEntry,
  QuotaList,
  QuotaQuery,
  RsaRecipient,
  RsaRequest,
  SenderAccount,
  SenderAccountList,
  SendMessageRequest,
  SendMessageResponse,
  SendMode,
  Template,
  TemplateList,
  TemplateParam,
  TemplateStatus,
} from '../src/types.ts';

/** True only when both types are the same: same fields, same optionality, same field types. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;

/** One object type from an intersection or mapped type, so it compares equal to a plain one. */
type Flatten<T> = { [K in keyof T]: T[K] };
type WithRequired<T, K extends keyof T> = Flatten<Omit<T, K> & { [P in K]-?: Exclude<T[P], undefined> }>;
/** A query as it goes on the wire: the SDK sends a Date as its ISO 8601 string. */
type OnTheWire<T> = { [K in keyof T]: Exclude<T[K], Date> };

type Body<Operation extends keyof ApiOperations> = ApiOperations[Operation] extends { requestBody: infer B } ? B : never;
type Query<Operation extends keyof ApiOperations> = ApiOperations[Operation]['parameters'] extends { query: infer Q } ? Q : never;
type Answer<Operation extends keyof ApiOperations, Status extends keyof ApiOperations[Operation]['responses']> = ApiOperations[Operation]['responses'][Status];

// Responses: field for field what the service answers.
export type Checks = [
  Assert<Equal<MessageRecord, Answer<'getMessage', 200>>>,
  Assert<Equal<MessageList, Answer<'listMessages', 200>>>,
  Assert<Equal<MessageStatus, Answer<'getMessage', 200>['status']>>,
  Assert<Equal<SendMessageResponse, Answer<'sendMessage', 202>>>,
  Assert<Equal<BatchResponse, Answer<'sendBatch', 202>>>,
  Assert<Equal<BatchResponse, Answer<'sendRsa', 202>>>,
  Assert<Equal<BatchResultItem, Answer<'sendBatch', 202>['results'][number]>>,
  Assert<Equal<CancelResponse, Answer<'cancelMessage', 200>>>,
  Assert<Equal<TemplateList, Answer<'listTemplates', 200>>>,
  Assert<Equal<Template, Answer<'listTemplates', 200>['templates'][number]>>,
  Assert<Equal<TemplateParam, Answer<'listTemplates', 200>['templates'][number]['params'][number]>>,
  Assert<Equal<TemplateStatus, Answer<'listTemplates', 200>['templates'][number]['status']>>,
  Assert<Equal<SenderAccountList, Answer<'listOas', 200>>>,
  Assert<Equal<SenderAccount, Answer<'listOas', 200>['oas'][number]>>,
  Assert<Equal<QuotaList, Answer<'getQuota', 200>>>,
  Assert<Equal<QuotaEntry, Answer<'getQuota', 200>['quotas'][number]>>,
  Assert<Equal<ErrorBody, ApiSchemas['ErrorBody']>>,
  Assert<Equal<TmsErrorType, ApiSchemas['ErrorBody']['error']['type']>>,
  Assert<Equal<DeliveryReport, ApiSchemas['DeliveryReport']>>,
  Assert<Equal<DeliveryReport, ApiWebhooks['deliveryReport']['requestBody']>>,

  // Requests.
  Assert<Equal<SendMessageRequest, Body<'sendMessage'>>>,
  Assert<Equal<SendMode, Exclude<Body<'sendMessage'>['mode'], undefined>>>,
  // The API takes a recipient without a phone (and answers that item with missing_phone); the SDK requires one.
  Assert<Equal<BatchRecipient, WithRequired<Body<'sendBatch'>['recipients'][number], 'phone'>>>,
  Assert<Equal<BatchRequest, Flatten<Omit<Body<'sendBatch'>, 'recipients'> & { recipients: BatchRecipient[] }>>>,
  // Likewise rsa_phone (rsa_phone_invalid).
  Assert<Equal<RsaRecipient, WithRequired<Body<'sendRsa'>['recipients'][number], 'rsa_phone'>>>,
  Assert<Equal<RsaRequest, Flatten<Omit<Body<'sendRsa'>, 'recipients'> & { recipients: RsaRecipient[] }>>>,
  // from and to also take a Date, sent as ISO 8601.
  Assert<Equal<OnTheWire<ListMessagesQuery>, Query<'listMessages'>>>,
  Assert<Equal<ListTemplatesQuery, Query<'listTemplates'>>>,
  Assert<Equal<QuotaQuery, Query<'getQuota'>>>,
];
