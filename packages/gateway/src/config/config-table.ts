/**
 * The README's configuration table, generated from the schema (variables.ts and
 * cross-field-rules.ts) so the documentation cannot drift from what start-up accepts.
 */
import { CROSS_FIELD_RULES } from './cross-field-rules.ts';
import { describeAcceptedValues } from './read-variable.ts';
import type { Variable } from './variable-kinds.ts';
import { CONFIG_VARIABLES, VARIABLE_NAMES, type VariableName } from './variables.ts';

/** The file holding the table, from the repository root. */
export const CONFIG_TABLE_FILE = 'README.md';
const CONFIG_TABLE_START = '<!-- config-table:start -->';
const CONFIG_TABLE_END = '<!-- config-table:end -->';

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function defaultCell(variable: Variable): string {
  if (!('default' in variable)) return variable.whenUnset;
  const value = Array.isArray(variable.default) ? variable.default.join(',') : String(variable.default);
  // An empty default means "unset", which the note explains.
  if (value === '' && variable.defaultNote !== undefined) return variable.defaultNote;
  return variable.defaultNote === undefined ? `\`${value}\`` : `\`${value}\` (${variable.defaultNote})`;
}

function meaningCell(name: VariableName, variable: Variable): string {
  const rules = CROSS_FIELD_RULES.filter((rule) => rule.variable === name).map((rule) => rule.summary);
  const condition = 'onlyWith' in variable && variable.onlyWith !== undefined ? [`Read only when \`${variable.onlyWith}\` is set`] : [];
  return [variable.meaning, ...condition, ...rules].join('. ');
}

/** The generated table with its markers, as it stands in the README. */
function renderConfigurationTable(): string {
  const rows = VARIABLE_NAMES.map((name) => {
    const variable: Variable = CONFIG_VARIABLES[name];
    return `| \`${name}\` | ${cell(defaultCell(variable))} | ${cell(describeAcceptedValues(variable))} | ${cell(meaningCell(name, variable))} |`;
  });
  return [
    CONFIG_TABLE_START,
    '<!-- Generated from packages/gateway/src/config/variables.ts by `npm run docs:config`. Do not edit by hand. -->',
    '',
    '| Variable | Default | Accepted values | Meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    CONFIG_TABLE_END,
  ].join('\n');
}

/** The README with its table between the markers replaced by the generated one. */
export function withConfigurationTable(readme: string): string {
  const start = readme.indexOf(CONFIG_TABLE_START);
  const end = readme.indexOf(CONFIG_TABLE_END);
  if (start === -1 || end < start) throw new Error(`${CONFIG_TABLE_FILE} has no ${CONFIG_TABLE_START} … ${CONFIG_TABLE_END} markers`);
  return readme.slice(0, start) + renderConfigurationTable() + readme.slice(end + CONFIG_TABLE_END.length);
}
