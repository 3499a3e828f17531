/** A spinner for slow operations; its label is what screen readers announce. */
export function Spinner({ label = 'working' }: { label?: string }) {
  return <span className="spinner" role="status" aria-label={label} />;
}

/** An API error as the server worded it. */
export function ErrorText({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}
