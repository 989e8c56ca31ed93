/**
 * Reads one environment variable by its descriptor. An unset or empty variable takes the default;
 * a bad value throws a ConfigError naming the variable, quoting the value unless it may be secret.
 */
import { resolve } from 'node:path';
import { ConfigError } from './config-error.ts';
import { KEY_ID_HEX } from '../lib/crypto.ts';
import { FIRST_FORMAT_KEY_ID, MASTER_KEY_FORM, parseMasterKey } from './master-key.ts';
import type { MillisecondListVariable, ValueOf, Variable } from './variable-kinds.ts';

export type Environment = Record<string, string | undefined>;

/** Words a boolean variable accepts, in any letter case. */
export const TRUE_WORDS = ['true', '1', 'yes', 'on'] as const;
export const FALSE_WORDS = ['false', '0', 'no', 'off'] as const;

const POSTGRES_URL_FORM = 'a postgres:// or postgresql:// URL';
const KEY_ID_LIST_FORM = `comma-separated master key ids (${KEY_ID_HEX} hex digits each), and \`${FIRST_FORMAT_KEY_ID}\` for secrets from before key ids`;

/** What a value must look like, in words shared by the error messages and the README. */
export function describeAcceptedValues(variable: Variable): string {
  switch (variable.kind) {
    case 'integer':
      return `whole number, ${variable.min} to ${variable.max}`;
    case 'boolean': {
      const alternatives = TRUE_WORDS.slice(1).map((word, index) => `${word}/${FALSE_WORDS[index + 1]}`);
      return `${TRUE_WORDS[0]} or ${FALSE_WORDS[0]} (also ${alternatives.join(', ')})`;
    }
    case 'choice':
      return `one of ${variable.choices.join(', ')}`;
    case 'httpUrl':
      return 'an http(s) URL';
    case 'millisecondList':
      return millisecondListForm(variable);
    case 'text':
      return variable.accepts;
    case 'directory':
      return 'a directory path';
    case 'secretToken':
      return `at least ${variable.minLength} characters`;
    case 'masterKey':
      return MASTER_KEY_FORM;
    case 'postgresUrl':
      return POSTGRES_URL_FORM;
    case 'keyIdList':
      return KEY_ID_LIST_FORM;
  }
}

function millisecondListForm(variable: MillisecondListVariable): string {
  return `1 to ${variable.maxEntries} comma-separated whole numbers of milliseconds (at most ${variable.maxEach} each)`;
}

export function readVariable<V extends Variable>(name: string, variable: V, env: Environment): ValueOf<V> {
  return readAnyVariable(name, variable, env) as ValueOf<V>;
}

function readAnyVariable(name: string, variable: Variable, env: Environment): ValueOf<Variable> {
  const raw = env[name];
  const unset = raw === undefined || raw === '';
  const applies = !('onlyWith' in variable) || variable.onlyWith === undefined || Boolean(env[variable.onlyWith]);
  switch (variable.kind) {
    case 'integer':
      return unset || !applies ? variable.default : readInteger(name, raw, variable.min, variable.max);
    case 'boolean':
      return unset || !applies ? variable.default : readBoolean(name, raw);
    case 'choice': {
      if (unset) return variable.default;
      if (!variable.choices.includes(raw)) throw new ConfigError(name, `must be ${describeAcceptedValues(variable)}; got "${raw}"`);
      return raw;
    }
    case 'httpUrl':
      return unset ? variable.default : readHttpUrl(name, raw);
    case 'millisecondList':
      return raw === undefined || raw.trim() === '' ? Object.freeze([...variable.default]) : readMillisecondList(name, raw, variable);
    case 'text':
      return unset ? variable.default : raw;
    case 'directory':
      return resolve(unset ? variable.default : raw);
    case 'secretToken': {
      if (unset) return null;
      if (raw.length < variable.minLength) throw new ConfigError(name, `must be ${describeAcceptedValues(variable)}`);
      return raw;
    }
    case 'masterKey':
      return unset ? null : parseMasterKey(raw, name);
    case 'keyIdList':
      return unset ? Object.freeze([]) : readKeyIdList(name, raw);
    case 'postgresUrl': {
      if (unset) return null;
      if (!/^postgres(ql)?:\/\//.test(raw)) throw new ConfigError(name, `must be ${POSTGRES_URL_FORM}`);
      return raw;
    }
  }
}

function readKeyIdList(name: string, raw: string): readonly string[] {
  const ids = raw.split(',').map((id) => id.trim().toLowerCase());
  const pattern = new RegExp(`^[0-9a-f]{${KEY_ID_HEX}}$`);
  for (const id of ids) if (id !== FIRST_FORMAT_KEY_ID && !pattern.test(id)) throw new ConfigError(name, `must be ${KEY_ID_LIST_FORM}; got "${id}"`);
  return Object.freeze([...new Set(ids)]);
}

function readInteger(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readBoolean(name: string, raw: string): boolean {
  const word = raw.toLowerCase();
  if ((TRUE_WORDS as readonly string[]).includes(word)) return true;
  if ((FALSE_WORDS as readonly string[]).includes(word)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function readHttpUrl(name: string, raw: string): string {
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

function readMillisecondList(name: string, raw: string, variable: MillisecondListVariable): readonly number[] {
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length > variable.maxEntries || parts.some((part) => !/^\d+$/.test(part) || Number(part) > variable.maxEach)) {
    throw new ConfigError(name, `must be ${millisecondListForm(variable)}, got "${raw}"`);
  }
  return Object.freeze(parts.map(Number));
}
