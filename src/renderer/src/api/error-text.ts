/** A failure as the sentence a person reads (the server's message for an API error). */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The first failure among several (a query's error is null while it has none), as text. */
export function firstError(...errors: unknown[]): string | undefined {
  const error = errors.find((candidate) => candidate !== null && candidate !== undefined);
  return error === undefined ? undefined : errorText(error);
}
