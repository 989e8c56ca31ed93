/**
 * Route schemas compiled the first time a request needs them, not when the route is registered.
 *
 * Fastify compiles every route's request validators (Ajv) and response serializers
 * (fast-json-stringify) when the server starts: over 200 here, for the API, the operator API and
 * the console, whose generated sources and code the API's heap keeps for the life of the process
 * (4 MB of the 33 it holds under load). A process uses few of them (a sender's gateway rarely
 * answers an operator), so each is compiled on its first request.
 * `compilePending()` compiles all the rest at once, for a test that every schema is sound.
 */
import { Ajv, type Options as AjvOptions, type ErrorObject } from 'ajv';
import { SerializerSelector, type RouteDefinition, type Serializer, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

const ajvBase: AjvOptions = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false, keywords: ['example'] };

/** What Fastify calls to check one part of a request; after `false` it reads `errors`. */
interface LazyValidator {
  (data: unknown): boolean;
  errors: ErrorObject[] | null | undefined;
}

export interface SchemaCompilers {
  /** For `Fastify({ schemaController: { compilersFactory } })`. */
  compilersFactory: { buildSerializer: SerializerFactory };
  /** For `app.setValidatorCompiler`. */
  validatorCompiler: (route: { schema: object; httpPart?: string }) => LazyValidator;
  /** Compiles every schema not compiled yet and says how many that was; throws the first compilation error. */
  compilePending(): number;
}

export function createSchemaCompilers(): SchemaCompilers {
  /** Bodies are JSON and must have the right types: no coercion ("123" is not 123). */
  const bodyAjv = new Ajv({ ...ajvBase, coerceTypes: false });
  /** Query strings and path parameters are text: coerce them to the declared types. */
  const textAjv = new Ajv({ ...ajvBase, coerceTypes: 'array' });
  const pending = new Set<() => void>();

  /** A function that returns what `compile` makes, compiling it at its first call (or in compilePending). */
  function onFirstUse<Compiled>(compile: () => Compiled): () => Compiled {
    let compiled: Compiled | undefined;
    const ensure = (): Compiled => {
      if (compiled === undefined) {
        compiled = compile();
        pending.delete(ensure);
      }
      return compiled;
    };
    pending.add(ensure);
    return ensure;
  }

  const validatorCompiler: SchemaCompilers['validatorCompiler'] = ({ schema, httpPart }) => {
    const compiled = onFirstUse(() => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));
    const validate: LazyValidator = Object.assign(
      (data: unknown): boolean => {
        const check = compiled();
        const valid = check(data);
        validate.errors = check.errors;
        return valid;
      },
      { errors: null },
    );
    return validate;
  };

  const defaultSerializers = SerializerSelector();
  const buildSerializer: SerializerFactory = (externalSchemas, serializerOptions) => {
    const compileSerializer = defaultSerializers(externalSchemas, serializerOptions);
    return (route: RouteDefinition): Serializer => {
      const compiled = onFirstUse(() => compileSerializer(route));
      return (payload) => compiled()(payload);
    };
  };

  return {
    compilersFactory: { buildSerializer },
    validatorCompiler,
    compilePending: () => {
      const compiling = [...pending];
      for (const compile of compiling) compile();
      return compiling.length;
    },
  };
}
