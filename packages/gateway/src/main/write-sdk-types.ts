/**
 * `npm run sdk:types`: writes the SDK's view of the public API (packages/client/src/generated/
 * api-types.ts) from the public OpenAPI document, the one GET /openapi.json serves. The SDK may not
 * import the gateway, so this file is its bridge to the route schemas: its hand-written types are
 * checked against it at compile time, and test/api/sdk-types.test.ts fails while the file is stale.
 *
 * The document uses a small part of JSON Schema; a keyword that would change a type and is not
 * handled here stops the generator rather than being rendered wrong.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pino from 'pino';
import { parseConfig } from '../config/config.ts';
import type { OpenApiDocument, OperationObject, ParameterObject, Reference, SchemaObject } from '../http/openapi/document-types.ts';
import { createRuntime } from './runtime.ts';
import { startService } from './server.ts';

/** Where the generated types live, from the repository root. */
export const SDK_TYPES_FILE = 'packages/client/src/generated/api-types.ts';

const HEADER = `/*
 * The public API's types, generated from its OpenAPI document (GET /openapi.json) by
 * \`npm run sdk:types\`. Do not edit: change the gateway's route schemas and run it again.
 * The SDK's own types (../types.ts) are checked against these (test/types-match-api.test-d.ts).
 */
`;

/** Keywords that constrain values without changing their TypeScript type, or only document them. */
const UNTYPED_KEYWORDS = new Set([
  '$id',
  'title',
  'description',
  'example',
  'examples',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
]);
const TYPED_KEYWORDS = new Set(['$ref', 'type', 'enum', 'const', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'oneOf', 'allOf']);

const SCHEMA_REFERENCE = /^#\/components\/schemas\/([\w.-]+)$/;
const PARAMETER_REFERENCE = /^#\/components\/parameters\/([\w.-]+)$/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const PARAMETER_PLACES = ['path', 'query', 'header', 'cookie'] as const;

const isSchema = (value: unknown): value is SchemaObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const isReference = (value: object): value is Reference => '$ref' in value;

const propertyKey = (name: string): string => (IDENTIFIER.test(name) ? name : quote(name));
const quote = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function literal(value: unknown, at: string): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  throw new Error(`${at}: enum or const value ${JSON.stringify(value)} is not a string, number, boolean or null`);
}

/** Whether a type is a union or intersection at its top level (outside braces, brackets and quotes). */
function isCompound(type: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let index = 0; index < type.length; index += 1) {
    const character = type[index];
    if (quoted) {
      if (character === '\\') index += 1;
      else if (character === "'") quoted = false;
    } else if (character === "'") quoted = true;
    else if (character === '{' || character === '[' || character === '(' || character === '<') depth += 1;
    else if (character === '}' || character === ']' || character === ')' || character === '>') depth -= 1;
    else if (depth === 0 && (character === '|' || character === '&')) return true;
  }
  return false;
}

/** A member of a union, intersection or array, in parentheses when it is a union or intersection itself. */
const member = (type: string): string => (isCompound(type) ? `(${type})` : type);
const union = (types: string[]): string => [...new Set(types)].join(' | ');

/** An object type from `{name: type}` lines; an object with no properties is `Record<string, never>`. */
function objectLiteral(fields: [key: string, type: string][], indent: string): string {
  if (fields.length === 0) return 'Record<string, never>';
  return `{\n${fields.map(([key, type]) => `${indent}  ${key}: ${type};\n`).join('')}${indent}}`;
}

function objectType(schema: SchemaObject, at: string, indent: string): string {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const name of required) {
    if (typeof name !== 'string' || !Object.hasOwn(properties, name)) throw new Error(`${at}: required property ${JSON.stringify(name)} is not among its properties`);
  }
  const fields = Object.entries(properties).map(([name, property]): [string, string] => [
    `${propertyKey(name)}${required.includes(name) ? '' : '?'}`,
    typeOf(property, `${at}/properties/${name}`, `${indent}  `),
  ]);
  const additional = schema.additionalProperties;
  const rest = isSchema(additional) ? `Record<string, ${typeOf(additional, `${at}/additionalProperties`, indent)}>` : undefined;
  if (fields.length === 0) return rest ?? (additional === false ? 'Record<string, never>' : 'Record<string, unknown>');
  const known = objectLiteral(fields, indent);
  return rest ? `${known} & ${rest}` : known;
}

function typeOfTypeName(name: unknown, schema: SchemaObject, at: string, indent: string): string {
  switch (name) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `${member(schema.items === undefined ? 'unknown' : typeOf(schema.items, `${at}/items`, indent))}[]`;
    case 'object':
      return objectType(schema, at, indent);
    default:
      throw new Error(`${at}: unsupported type ${JSON.stringify(name)}`);
  }
}

/** The type a schema's own keywords give (not its compositions); undefined when they give none. */
function ownType(schema: SchemaObject, at: string, indent: string): string | undefined {
  if (schema.const !== undefined) return literal(schema.const, at);
  if (Array.isArray(schema.enum)) return union(schema.enum.map((value) => literal(value, at)));
  if (schema.type !== undefined) {
    const names = Array.isArray(schema.type) ? schema.type : [schema.type];
    return union(names.map((name) => typeOfTypeName(name, schema, at, indent)));
  }
  if (schema.properties !== undefined || schema.additionalProperties !== undefined) return objectType(schema, at, indent);
  return undefined;
}

/** The TypeScript type of a JSON Schema; `at` locates it in the document, for error messages. */
function typeOf(schema: unknown, at: string, indent: string): string {
  if (!isSchema(schema)) throw new Error(`${at}: a schema must be an object`);
  for (const keyword of Object.keys(schema)) {
    if (!TYPED_KEYWORDS.has(keyword) && !UNTYPED_KEYWORDS.has(keyword)) throw new Error(`${at}: unsupported JSON Schema keyword "${keyword}"`);
  }
  if (typeof schema.$ref === 'string') {
    const name = SCHEMA_REFERENCE.exec(schema.$ref)?.[1];
    if (!name) throw new Error(`${at}: unsupported reference ${schema.$ref}`);
    if (Object.keys(schema).some((keyword) => keyword !== '$ref' && TYPED_KEYWORDS.has(keyword))) throw new Error(`${at}: a reference with typed keywords beside it`);
    return `ApiSchemas[${quote(name)}]`;
  }
  const parts: string[] = [];
  const own = ownType(schema, at, indent);
  if (own !== undefined) parts.push(own);
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const members = schema[keyword];
    if (!Array.isArray(members)) continue;
    const types = members.map((item, index) => member(typeOf(item, `${at}/${keyword}/${index}`, indent)));
    parts.push(keyword === 'allOf' ? types.join(' & ') : union(types));
  }
  if (parts.length === 0) return 'unknown';
  return parts.length === 1 ? parts[0]! : parts.map(member).join(' & ');
}

function resolveParameter(parameter: ParameterObject | Reference, document: OpenApiDocument, at: string): ParameterObject {
  if (!isReference(parameter)) return parameter;
  const name = PARAMETER_REFERENCE.exec(parameter.$ref)?.[1];
  const resolved = name === undefined ? undefined : document.components.parameters?.[name];
  if (!resolved) throw new Error(`${at}: unresolved parameter reference ${parameter.$ref}`);
  return resolved;
}

function jsonSchemaOf(content: Record<string, { schema?: SchemaObject }> | undefined): SchemaObject | undefined {
  return content?.['application/json']?.schema;
}

/** An operation's parameters by place, request body and JSON responses by status. */
function operationType(operation: OperationObject, document: OpenApiDocument, at: string, indent: string): string {
  const inner = `${indent}  `;
  const places = PARAMETER_PLACES.flatMap((place): [string, string][] => {
    const fields = (operation.parameters ?? [])
      .map((parameter, index) => resolveParameter(parameter, document, `${at}/parameters/${index}`))
      .filter((parameter) => parameter.in === place)
      .map((parameter): [string, string] => [
        `${propertyKey(parameter.name)}${parameter.required ? '' : '?'}`,
        parameter.schema === undefined ? 'unknown' : typeOf(parameter.schema, `${at}/parameters/${parameter.name}`, `${inner}  `),
      ]);
    return fields.length > 0 ? [[place, objectLiteral(fields, `${inner}  `)]] : [];
  });
  const fields: [string, string][] = [['parameters', objectLiteral(places, inner)]];
  const body = jsonSchemaOf(operation.requestBody?.content);
  if (body) fields.push([operation.requestBody?.required ? 'requestBody' : 'requestBody?', typeOf(body, `${at}/requestBody`, inner)]);
  // Only JSON bodies have a type to check; a response without one (none, or text) is left out.
  const responses = Object.entries(operation.responses).flatMap(([status, response]): [string, string][] => {
    const schema = jsonSchemaOf(response.content);
    return schema ? [[/^\d+$/.test(status) ? status : quote(status), typeOf(schema, `${at}/responses/${status}`, `${inner}  `)]] : [];
  });
  fields.push(['responses', objectLiteral(responses, inner)]);
  return objectLiteral(fields, indent);
}

/** Every operation of a paths (or webhooks) object, by operationId or webhook name, sorted. */
function operationsOf(
  document: OpenApiDocument,
  items: OpenApiDocument['paths'],
  naming: { keyOf: (name: string, operation: OperationObject, at: string) => string; describe: (name: string, method: string) => string },
): [string, string][] {
  const entries: { key: string; comment: string; type: string }[] = [];
  for (const [name, item] of Object.entries(items)) {
    for (const [method, operation] of Object.entries(item)) {
      const at = `${name} ${method}`;
      entries.push({ key: naming.keyOf(name, operation, at), comment: naming.describe(name, method), type: operationType(operation, document, at, '  ') });
    }
  }
  entries.sort((a, b) => a.key.localeCompare(b.key));
  return entries.map(({ key, comment, type }) => [`/** ${comment} */\n  ${propertyKey(key)}`, type]);
}

function exportedInterface(name: string, fields: [string, string][]): string {
  return fields.length === 0 ? `export type ${name} = Record<string, never>;\n` : `export interface ${name} ${objectLiteral(fields, '')}\n`;
}

function operationIdOf(_path: string, operation: OperationObject, at: string): string {
  if (!operation.operationId) throw new Error(`${at}: an operation needs an operationId, its name in the generated types`);
  return operation.operationId;
}

/** The generated file's text: the document's schemas, operations and webhooks as TypeScript types. */
export function renderSdkTypes(document: OpenApiDocument): string {
  const schemas = Object.entries(document.components.schemas ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, schema]): [string, string] => [propertyKey(name), typeOf(schema, `#/components/schemas/${name}`, '  ')]);
  return [
    HEADER,
    '/** The schemas under components/schemas, by name. */',
    exportedInterface('ApiSchemas', schemas),
    '/** Each operation of /api/v1 by its operationId: parameters by place, request body, JSON responses by status. */',
    exportedInterface('ApiOperations', operationsOf(document, document.paths, { keyOf: operationIdOf, describe: (path, method) => `${method.toUpperCase()} ${path}` })),
    '/** The requests the service makes to your webhook URL (the delivery report), by name. */',
    exportedInterface('ApiWebhooks', operationsOf(document, document.webhooks ?? {}, { keyOf: (name) => name, describe: (_name, method) => `${method.toUpperCase()} to your webhook URL` })),
  ].join('\n');
}

/** The public document, from an in-process gateway on a throwaway SQLite store (the document does not depend on the store). */
async function readPublicDocument(): Promise<OpenApiDocument> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tms-sdk-types-'));
  try {
    const config = parseConfig({
      TMS_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      TMS_ADMIN_TOKEN: randomBytes(16).toString('hex'),
      TMS_LOG_LEVEL: 'silent',
      TMS_DEMO_SEED: 'false',
    });
    const service = await startService(await createRuntime(config, { log: pino({ level: 'silent' }) }), { api: true, worker: false });
    try {
      const response = await fetch(`${service.url}/openapi.json`);
      if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
      return (await response.json()) as OpenApiDocument;
    } finally {
      await service.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// Imported by the test for renderSdkTypes; writes only when run as the script.
const runAsScript = process.argv[1] !== undefined && pathToFileURL(resolve(process.argv[1])).href === import.meta.url;
if (runAsScript) {
  const target = fileURLToPath(new URL(`../../../../${SDK_TYPES_FILE}`, import.meta.url));
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, renderSdkTypes(await readPublicDocument()));
  console.log(`wrote ${SDK_TYPES_FILE}`);
}
