/** The parts of an OpenAPI 3.1 document the gateway builds and reshapes; the rest passes through. */
import type { ErrorType } from '../../services/errors.ts';
import type { NamedExamples, RequestHeaderDocs, SuccessResponseDocs } from './route-docs.ts';

export type SchemaObject = { [keyword: string]: unknown };

export interface Reference {
  $ref: string;
}

export interface ParameterObject {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: SchemaObject;
  example?: unknown;
}

export interface MediaTypeObject {
  schema?: SchemaObject;
  example?: unknown;
  examples?: NamedExamples;
}

export interface HeaderObject {
  description: string;
  required?: boolean;
  schema: SchemaObject;
  example?: unknown;
}

export interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject | Reference>;
  content?: Record<string, MediaTypeObject>;
}

export type SecuritySchemeObject =
  | { type: 'http'; scheme: 'bearer'; description: string }
  | { type: 'apiKey'; in: 'header' | 'cookie'; name: string; description: string };

export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: SecurityRequirement[];
  parameters?: (ParameterObject | Reference)[];
  requestBody?: { description?: string; required?: boolean; content: Record<string, MediaTypeObject> };
  responses: Record<string, ResponseObject>;
  'x-request-headers'?: Record<string, RequestHeaderDocs>;
  'x-parameter-examples'?: Record<string, unknown>;
  'x-optional-body'?: true;
  'x-request-examples'?: NamedExamples;
  'x-responses'?: Record<string, SuccessResponseDocs>;
  'x-error-types'?: readonly ErrorType[];
  'x-error-messages'?: Partial<Record<ErrorType, string>>;
}

export type PathItem = Record<string, OperationObject>;

export interface TagObject {
  name: string;
  description: string;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string; summary?: string };
  servers?: { url: string; description?: string }[];
  security?: SecurityRequirement[];
  tags?: TagObject[];
  paths: Record<string, PathItem>;
  webhooks?: Record<string, PathItem>;
  components: {
    schemas?: Record<string, SchemaObject>;
    parameters?: Record<string, ParameterObject>;
    headers?: Record<string, HeaderObject>;
    securitySchemes?: Record<string, SecuritySchemeObject>;
  };
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
