/** A bad configuration value. Start-up prints the message, which names the variable, and exits 78. */
export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}
