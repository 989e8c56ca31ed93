export interface TemplateParam {
  name: string;
  type: string;
  required: boolean;
  max_length: number;
  min_length: number;
}

const PARSED_PARAMS_LIMIT = 1000;
const parsedParams = new Map<string, TemplateParam[]>();
const paramsByName = new WeakMap<TemplateParam[], Map<string, TemplateParam>>();

/** Parses a template's stored params; memoised because every send of a template needs them. */
export function parseTemplateParams(json: string): TemplateParam[] {
  let params = parsedParams.get(json);
  if (!params) {
    params = JSON.parse(json) as TemplateParam[];
    if (parsedParams.size >= PARSED_PARAMS_LIMIT) parsedParams.delete(parsedParams.keys().next().value as string);
    parsedParams.set(json, params);
  }
  return params;
}

function indexByName(params: TemplateParam[]): Map<string, TemplateParam> {
  let index = paramsByName.get(params);
  if (!index) {
    index = new Map(params.map((param) => [param.name, param]));
    paramsByName.set(params, index);
  }
  return index;
}

/**
 * Checks template_data against the template's params (docs/api.md): every required param
 * present, every value a string within min_length..max_length, no unknown keys.
 * Returns a human explanation of the first problem, or null when the data fits.
 */
export function findTemplateDataProblem(params: TemplateParam[], data: Record<string, unknown>): string | null {
  const known = indexByName(params);
  for (const key of Object.keys(data)) {
    if (!known.has(key)) return `unknown parameter "${key}"; this template takes ${params.map((param) => param.name).join(', ') || 'no parameters'}`;
  }
  for (const param of params) {
    // Own keys only: a param named like an Object.prototype member ("constructor") is not "given".
    const value = Object.hasOwn(data, param.name) ? data[param.name] : undefined;
    if (value === undefined) {
      if (param.required) return `missing required parameter "${param.name}"`;
      continue;
    }
    if (typeof value !== 'string') return `parameter "${param.name}" must be a string`;
    const length = [...value].length;
    if (length > param.max_length) return `parameter "${param.name}" is ${length} characters, more than its max_length ${param.max_length}`;
    if (length < param.min_length) return `parameter "${param.name}" is ${length} characters, less than its min_length ${param.min_length}`;
  }
  return null;
}
