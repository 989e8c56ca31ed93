/**
 * The kinds of environment variable the gateway reads. A descriptor says everything about one
 * variable: its kind, default and limits (how it is read and checked) and its README text.
 */

interface Documented {
  /** The README "Meaning" cell. */
  readonly meaning: string;
  /** Shown after the default in the README, e.g. "15 min". */
  readonly defaultNote?: string;
}

/** A whole number within bounds. */
export interface IntegerVariable extends Documented {
  readonly kind: 'integer';
  readonly default: number;
  readonly min: number;
  readonly max: number;
  /** Read only when this other variable is set; otherwise the default applies and the value is not checked. */
  readonly onlyWith?: string;
}

export interface BooleanVariable extends Documented {
  readonly kind: 'boolean';
  readonly default: boolean;
  /** Read only when this other variable is set; otherwise the default applies and the value is not checked. */
  readonly onlyWith?: string;
}

/** One word out of a closed list. */
export interface ChoiceVariable extends Documented {
  readonly kind: 'choice';
  readonly default: string;
  readonly choices: readonly string[];
}

/** An http(s) base URL; trailing slashes are dropped. */
export interface HttpUrlVariable extends Documented {
  readonly kind: 'httpUrl';
  readonly default: string;
}

/** Comma-separated whole milliseconds, e.g. "1000,5000,30000". */
export interface MillisecondListVariable extends Documented {
  readonly kind: 'millisecondList';
  readonly default: readonly number[];
  readonly maxEntries: number;
  readonly maxEach: number;
}

/** Free text, taken as given. */
export interface TextVariable extends Documented {
  readonly kind: 'text';
  readonly default: string;
  /** What the value is, for the README. */
  readonly accepts: string;
}

/** A directory, made absolute against the working directory. */
export interface DirectoryVariable extends Documented {
  readonly kind: 'directory';
  readonly default: string;
}

/** A secret string of a least length; null when unset. Never repeated in a message. */
export interface SecretTokenVariable extends Documented {
  readonly kind: 'secretToken';
  readonly minLength: number;
  /** The README "Default" cell: what happens when it is not set. */
  readonly whenUnset: string;
}

/** The 32-byte master key; null when unset. Never repeated in a message. */
export interface MasterKeyVariable extends Documented {
  readonly kind: 'masterKey';
  readonly whenUnset: string;
}

/** Comma-separated master key ids (as `tms admin rotate-master-key` and the start-up refusal name them). */
export interface KeyIdListVariable extends Documented {
  readonly kind: 'keyIdList';
  readonly whenUnset: string;
}

/** A PostgreSQL connection URL; null when unset. Not repeated in a message: it may hold a password. */
export interface PostgresUrlVariable extends Documented {
  readonly kind: 'postgresUrl';
  readonly whenUnset: string;
}

export type Variable =
  | IntegerVariable
  | BooleanVariable
  | ChoiceVariable
  | HttpUrlVariable
  | MillisecondListVariable
  | TextVariable
  | DirectoryVariable
  | SecretTokenVariable
  | MasterKeyVariable
  | KeyIdListVariable
  | PostgresUrlVariable;

/** The parsed value of a variable of kind V. */
export type ValueOf<V extends Variable> = V extends IntegerVariable
  ? number
  : V extends BooleanVariable
    ? boolean
    : V extends MillisecondListVariable
      ? readonly number[]
      : V extends KeyIdListVariable
        ? readonly string[]
      : V extends MasterKeyVariable
        ? Buffer | null
        : V extends SecretTokenVariable | PostgresUrlVariable
          ? string | null
          : string;
