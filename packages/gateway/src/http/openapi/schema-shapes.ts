/**
 * Rewrites the JSON Schemas TypeBox generates into the equivalent shapes readers and renderers
 * understand: a union of string literals becomes one `enum` with its `type` (else renderers show an
 * "object" or a list of one-value alternatives), and "X or null" becomes `type: [X, "null"]`.
 * The documents only: validation keeps TypeBox's schemas.
 */
import type { OpenApiDocument, SchemaObject } from './document-types.ts';

const isObject = (value: unknown): value is SchemaObject => typeof value === 'object' && value !== null && !Array.isArray(value);

const SINGLE_VALUE_KEYS = new Set(['type', 'enum', 'const']);

/** `{type: 'string', enum: ['a']}` or `{type: 'string', const: 'a'}`: one literal value and nothing else. */
function literalOf(schema: unknown): { type: string; value: unknown } | undefined {
  if (!isObject(schema) || typeof schema.type !== 'string') return undefined;
  if (!Object.keys(schema).every((key) => SINGLE_VALUE_KEYS.has(key))) return undefined;
  if (schema.const !== undefined) return { type: schema.type, value: schema.const };
  if (Array.isArray(schema.enum) && schema.enum.length === 1) return { type: schema.type, value: schema.enum[0] };
  return undefined;
}

function typeOfValues(values: readonly unknown[]): string | undefined {
  const types = new Set(values.map((value) => (Number.isInteger(value) ? 'integer' : typeof value)));
  if (types.size !== 1) return undefined;
  const [type] = types;
  return type === 'string' || type === 'integer' || type === 'boolean' ? type : undefined;
}

const isNullSchema = (schema: unknown): boolean => isObject(schema) && schema.type === 'null' && Object.keys(schema).length === 1;

/** A member that can take `null` into its own `type`: a plain typed schema, no composition or reference. */
function canAbsorbNull(schema: unknown): schema is SchemaObject {
  return isObject(schema) && typeof schema.type === 'string' && !('$ref' in schema) && !('anyOf' in schema) && !('oneOf' in schema) && !('allOf' in schema);
}

function reshape(schema: SchemaObject): void {
  const alternatives = schema.anyOf;
  if (Array.isArray(alternatives)) {
    const literals = alternatives.map(literalOf);
    if (literals.length > 1 && literals.every((literal) => literal !== undefined && literal.type === literals[0]!.type)) {
      delete schema.anyOf;
      schema.type = literals[0]!.type;
      schema.enum = literals.map((literal) => literal!.value);
    } else if (alternatives.length === 2 && alternatives.some(isNullSchema)) {
      const member = alternatives.find((alternative) => !isNullSchema(alternative));
      if (canAbsorbNull(member)) {
        delete schema.anyOf;
        const description = schema.description ?? member.description;
        Object.assign(schema, member, { type: [member.type, 'null'] });
        if (Array.isArray(member.enum)) schema.enum = [...member.enum, null];
        if (description !== undefined) schema.description = description;
      }
    }
  }
  if (Array.isArray(schema.enum) && schema.type === undefined) {
    const type = typeOfValues(schema.enum);
    if (type) schema.type = type;
  }
}

const NESTED_SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const NESTED_SCHEMAS = ['items', 'additionalProperties', 'not', 'contains'];

/** Reshapes a schema and everything nested in it, innermost first. */
export function reshapeSchema(schema: unknown): void {
  if (!isObject(schema)) return;
  for (const key of NESTED_SCHEMA_LISTS) if (Array.isArray(schema[key])) (schema[key] as unknown[]).forEach(reshapeSchema);
  for (const key of NESTED_SCHEMAS) reshapeSchema(schema[key]);
  if (isObject(schema.properties)) Object.values(schema.properties).forEach(reshapeSchema);
  reshape(schema);
}

/** Every schema position of a document: components, parameters, bodies, responses and headers. */
export function reshapeDocumentSchemas(document: OpenApiDocument): void {
  Object.values(document.components.schemas ?? {}).forEach(reshapeSchema);
  Object.values(document.components.parameters ?? {}).forEach((parameter) => reshapeSchema(parameter.schema));
  for (const item of [...Object.values(document.paths), ...Object.values(document.webhooks ?? {})]) {
    for (const operation of Object.values(item)) {
      for (const parameter of operation.parameters ?? []) if ('schema' in parameter) reshapeSchema(parameter.schema);
      for (const media of Object.values(operation.requestBody?.content ?? {})) reshapeSchema(media.schema);
      for (const response of Object.values(operation.responses)) {
        for (const media of Object.values(response.content ?? {})) reshapeSchema(media.schema);
      }
    }
  }
}
