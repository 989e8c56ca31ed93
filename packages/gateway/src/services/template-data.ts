export interface TemplateParam {
  name: string;
  type: string;
  required: boolean;
  max_length: number;
  min_length: number;
}

export function parseTemplateParams(json: string): TemplateParam[] {
  return JSON.parse(json) as TemplateParam[];
}

/**
 * Checks template_data against the template's params (decisions.md): every required param
 * present, every value a string within min_length..max_length, no unknown keys.
 * Returns a human explanation of the first problem, or null when the data fits.
 */
export function findTemplateDataProblem(params: TemplateParam[], data: Record<string, unknown>): string | null {
  const known = new Map(params.map((param) => [param.name, param]));
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
