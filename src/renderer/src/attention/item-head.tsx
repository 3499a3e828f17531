import type { AttentionItem } from '../../../shared/approvals.js';
import { attentionHeading } from '../../../shared/describe-attention.js';
import { age } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { useNow } from '../hooks/use-now.js';

/** An item's heading: what kind of wait, for how long, and the task and computer it concerns. */
export function ItemHead({ item }: { item: AttentionItem }) {
  const now = useNow();
  return (
    <header className="attention-head">
      <h3>{attentionHeading(item)}</h3>
      <span className="muted" title={item.since}>
        waiting {age(item.since, now)}
      </span>
      <span className="attention-links">
        {item.task_id && <a href={href.task(item.task_id)}>{item.task_id}</a>}
        {item.computer_id && <a href={href.computer(item.computer_id)}>{item.computer_id}</a>}
      </span>
    </header>
  );
}
