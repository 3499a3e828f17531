import type { ReactNode } from 'react';
import { useApiAction } from '../hooks/use-api-action.js';
import { Spinner } from './feedback.js';

type Props = {
  onClick: () => Promise<unknown>;
  /** Where a failure goes (shown by the screen); undefined clears it when a new attempt starts. */
  onError: (message: string | undefined) => void;
  children: ReactNode;
  className?: string;
  disabled?: boolean;
  title?: string;
  'aria-label'?: string;
};

/** A button whose action talks to the API: a spinner while it runs, the error reported after. */
export function AsyncButton({ onClick, onError, children, disabled, ...rest }: Props) {
  const { busy, run } = useApiAction(onError);
  return (
    <button type="button" {...rest} disabled={disabled || busy} onClick={() => void run(onClick)}>
      {children}
      {busy && <Spinner />}
    </button>
  );
}
