/** Input checks shared by the seed, the state file and the platform: bodies arrive as untyped JSON. */

export type JsonObject = Record<string, unknown>;

/** A JSON object proper: not null and not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
