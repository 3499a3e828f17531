import { useState } from 'react';

/**
 * A list read as its newest `first` items, doubled on request up to `most` (the API's limit):
 * how many to ask for, and `older` once an answer came back full (there may be older ones).
 */
export function useNewest(first: number, most: number) {
  const [shown, setShown] = useState(first);
  return {
    shown,
    older: (answered: number | undefined) =>
      answered === shown && shown < most ? () => setShown(Math.min(shown * 2, most)) : undefined,
  };
}

/** "The newest 100 tasks. [Show older tasks]", where there may be more. */
export function ShowOlder({
  shown,
  noun,
  onOlder,
}: {
  shown: number;
  noun: string;
  onOlder: (() => void) | undefined;
}) {
  if (!onOlder) return null;
  return (
    <p className="muted">
      The newest {shown.toLocaleString('en-US')} {noun}.{' '}
      <button type="button" className="secondary" onClick={onOlder}>
        Show older {noun}
      </button>
    </p>
  );
}
