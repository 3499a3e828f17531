import { useCallback, useEffect, useRef, useState } from 'react';
import { errorText } from '../api/client.js';

export type Polled<T> = {
  data: T | undefined;
  error: string | undefined;
  /** Fetches again now (after a change the person made) and resolves when it is shown. */
  reload: () => Promise<void>;
};

/** Fetches at once and then every intervalMs while mounted; keeps the last good answer on error. */
export function usePolling<T>(load: () => Promise<T>, intervalMs: number): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const loadRef = useRef(load);
  loadRef.current = load;
  const mounted = useRef(true);

  const reload = useCallback(async () => {
    try {
      const value = await loadRef.current();
      if (!mounted.current) return;
      setData(value);
      setError(undefined);
    } catch (failure) {
      if (mounted.current) setError(errorText(failure));
    }
  }, []);

  useEffect(() => {
    mounted.current = true;
    void reload();
    const timer = setInterval(() => void reload(), intervalMs);
    return () => {
      mounted.current = false;
      clearInterval(timer);
    };
  }, [reload, intervalMs]);

  return { data, error, reload };
}
