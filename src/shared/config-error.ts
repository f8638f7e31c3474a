/** Thrown when options or settings are invalid, naming the field; nothing has started. */
export class ConfigError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}
