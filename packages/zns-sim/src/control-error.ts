/** The error of a bad control-API call: its HTTP status and message reach the caller as `{ error }`. */
export class ControlError extends Error {
  override name = 'ControlError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A seed parser's complaint about control-API input, without the `seed: ` prefix meant for seed files. */
export function controlErrorFromSeedError(error: unknown): ControlError {
  return new ControlError(400, (error as Error).message.replace(/^seed: /, ''));
}
