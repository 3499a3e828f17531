import { useState } from 'react';

/**
 * Copies text to the clipboard. Where the clipboard is refused (no permission, no focus) the text
 * stays selectable beside the button, and the button says so.
 */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'refused'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('refused');
    }
  };
  const shown = state === 'copied' ? 'Copied' : state === 'refused' ? 'Select and copy' : label;
  return (
    <button type="button" className="secondary" onClick={() => void copy()}>
      {shown}
    </button>
  );
}
