import type { Environment } from './read-variable.ts';

/**
 * Where `tms admin sender-accounts connect --secrets-env` finds a sender account's secrets, one
 * variable per field of the secrets file. They are input to that one command, not configuration:
 * no process reads them at start and they never enter the Config (a service started with them set
 * must not carry a customer's secrets around), so they are not in the configuration table. They are
 * read here because only config/ reads the environment.
 */
export const SENDER_ACCOUNT_SECRET_VARIABLES = {
  app_secret: 'TMS_ZNS_APP_SECRET',
  refresh_token: 'TMS_ZNS_REFRESH_TOKEN',
  oa_secret_key: 'TMS_ZNS_OA_SECRET_KEY',
} as const;

export type SenderAccountSecretField = keyof typeof SENDER_ACCOUNT_SECRET_VARIABLES;

/** Each field's value; an empty variable counts as unset, as for every variable of the gateway. */
export function readSenderAccountSecretVariables(env: Environment = process.env): Record<SenderAccountSecretField, string | undefined> {
  const read = (field: SenderAccountSecretField): string | undefined => {
    const value = env[SENDER_ACCOUNT_SECRET_VARIABLES[field]];
    return value === undefined || value === '' ? undefined : value;
  };
  return { app_secret: read('app_secret'), refresh_token: read('refresh_token'), oa_secret_key: read('oa_secret_key') };
}
