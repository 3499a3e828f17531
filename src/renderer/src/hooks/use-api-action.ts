import { useState } from 'react';
import { errorText } from '../api/error-text.js';

/**
 * A control that calls the API: `busy` while its action runs, the failure as readable text after.
 * With `report`, failures go there (a screen that shows them) instead of `error`.
 */
export function useApiAction(report?: (message: string | undefined) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const show = report ?? setError;
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    show(undefined);
    try {
      await action();
    } catch (failure) {
      show(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
