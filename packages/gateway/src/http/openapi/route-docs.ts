/**
 * What a route's `schema:` block says for the reference only, next to the schemas that validate it.
 * @fastify/swagger copies route-schema keys starting with `x-` onto the operation unchanged;
 * documents.ts turns them into examples, error responses and descriptions and removes them.
 */
import type { ErrorType } from '../../services/errors.ts';
import type { HeaderObject, SchemaObject } from './document-types.ts';

/** OpenAPI's Example Object: a named, summarised value. */
export interface NamedExample {
  summary: string;
  description?: string;
  value: unknown;
}

export type NamedExamples = Record<string, NamedExample>;

/** A success response as the reference shows it. */
export interface SuccessResponseDocs {
  description: string;
  examples: NamedExamples;
  /** For a body that is not JSON (the Prometheus text of /metrics); the route then declares no response schema. */
  mediaType?: string;
  /** The schema of a body that is not JSON; text (`type: string`) when not given. */
  schema?: SchemaObject;
  /** Headers this response carries besides the ones every response of its audience has. */
  headers?: Record<string, HeaderObject>;
}

/** A request header the route reads itself; always a required string. */
export interface RequestHeaderDocs {
  description: string;
  example: string;
}

declare module 'fastify' {
  interface FastifySchema {
    /** Headers the route reads itself (so no schema validates them), by name. */
    'x-request-headers'?: Record<string, RequestHeaderDocs>;
    /** An example value of each path, query or header parameter, by name. */
    'x-parameter-examples'?: Record<string, unknown>;
    /** The body may be left out (the route fills in its default), though a schema validates it when sent. */
    'x-optional-body'?: true;
    /** Named examples of the request body. */
    'x-request-examples'?: NamedExamples;
    /** Each success status: what it means and examples of its body. */
    'x-responses'?: Record<number, SuccessResponseDocs>;
    /**
     * The catalogued error types this operation answers with. Each status among them becomes a
     * documented error response with one example per type, and the description lists them.
     */
    'x-error-types'?: readonly ErrorType[];
    /** This operation's own wording of an error's example message, where the catalogue's example would not fit it. */
    'x-error-messages'?: Partial<Record<ErrorType, string>>;
  }
}
