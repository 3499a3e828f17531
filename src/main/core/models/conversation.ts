import type { InputItem, OutputAction, OutputItem } from '../../../shared/responses.js';
import type { ImageResolver } from './image-resolver.js';
import type { ConversationItem, ImageData, Part } from './model-provider.js';

/** Older screenshots than the newest few are left out of a model call: they cost much, help little. */
export const MAX_HISTORY_IMAGES = 3;

/** An image still to load: where from, and which request field it came from (for a 400). */
type ImageSlot = { url: string; param: string; fresh: boolean; image: ImageData | null };

type Draft =
  | { type: 'message'; role: 'user' | 'assistant' | 'system' | 'developer'; content: DraftPart[] }
  | { type: 'computer_call_output'; call_id: string; slot: ImageSlot }
  | Exclude<ConversationItem, { type: 'message' } | { type: 'computer_call_output' }>;
type DraftPart = { type: 'text'; text: string } | { type: 'image'; slot: ImageSlot };

/**
 * How many model answers a conversation already holds: each run of the model's own items
 * (reasoning, assistant messages, calls) is one answer, wherever the items came from.
 */
export function earlierTurns(conversation: ConversationItem[]): number {
  let turns = 0;
  let inAnswer = false;
  for (const item of conversation) {
    const fromModel =
      item.type === 'reasoning' ||
      item.type === 'computer_call' ||
      item.type === 'function_call' ||
      (item.type === 'message' && item.role === 'assistant');
    if (fromModel && !inAnswer) turns++;
    inAnswer = fromModel;
  }
  return turns;
}

/** Builds a model's view of a chain: earlier turns, then this request's input. */
export class ConversationBuilder {
  private readonly drafts: Draft[] = [];
  private readonly seenIds = new Set<string>();
  private requestStart = 0;

  /** Adds an earlier response's input and output. */
  addTurn(input: InputItem[], output: OutputItem[]): void {
    input.forEach((item, index) => this.addInput(item, `input.${index}`, false));
    for (const item of output) this.addOutput(item);
  }

  /** Adds this request's input; its images must load, or the request is a 400. */
  addRequestInput(input: InputItem[]): void {
    this.requestStart = this.drafts.length;
    input.forEach((item, index) => this.addInput(item, `input.${index}`, true));
  }

  /**
   * Loads the images and returns the conversation. Every image of this request is loaded (a bad
   * one throws its 400); of the earlier ones only the newest few, and one that is gone by now
   * (its computer ended long ago) is left out instead. `input` is this request's part of it.
   */
  async build(
    images: ImageResolver,
  ): Promise<{ conversation: ConversationItem[]; input: ConversationItem[] }> {
    const slots = this.drafts.flatMap(slotsOf);
    let budget = MAX_HISTORY_IMAGES;
    const chosen: ImageSlot[] = [];
    for (const slot of slots.reverse()) {
      if (!slot.fresh && budget <= 0) continue;
      budget--;
      chosen.push(slot);
    }
    // Back in request order: a request over a limit hears about its first image past it.
    chosen.reverse();
    const loaded = await images.resolveAll(
      chosen.map((slot) => ({ url: slot.url, param: slot.param, required: slot.fresh })),
    );
    chosen.forEach((slot, index) => (slot.image = loaded[index] ?? null));
    const conversation = this.drafts.map(finish);
    return { conversation, input: conversation.slice(this.requestStart) };
  }

  private addInput(item: InputItem, param: string, fresh: boolean): void {
    if (item.id && this.seen(item.id)) return;
    switch (item.type) {
      case 'computer_call_output':
        this.drafts.push({
          type: 'computer_call_output',
          call_id: item.call_id,
          slot: {
            url: item.output.image_url,
            param: `${param}.output.image_url`,
            fresh,
            image: null,
          },
        });
        return;
      case 'function_call_output':
        this.drafts.push({
          type: 'function_call_output',
          call_id: item.call_id,
          output: typeof item.output === 'string' ? item.output : textOf(item.output),
        });
        return;
      case 'reasoning':
        this.drafts.push({ type: 'reasoning', text: item.summary.map((s) => s.text).join('\n') });
        return;
      case 'computer_call':
        this.drafts.push({
          type: 'computer_call',
          call_id: item.call_id,
          action: item.action as OutputAction,
        });
        return;
      case 'function_call':
        this.drafts.push({ ...item, type: 'function_call' });
        return;
      default:
        this.drafts.push({
          type: 'message',
          role: item.role,
          content: partsOf(item.content, `${param}.content`, fresh),
        });
    }
  }

  private addOutput(item: OutputItem): void {
    if (this.seen(item.id)) return;
    switch (item.type) {
      case 'reasoning':
        this.drafts.push({ type: 'reasoning', text: item.summary.map((s) => s.text).join('\n') });
        return;
      case 'message':
        this.drafts.push({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'text', text: item.content.map((c) => c.text).join('') }],
        });
        return;
      case 'computer_call':
        this.drafts.push({ type: 'computer_call', call_id: item.call_id, action: item.action });
        return;
      case 'function_call':
        this.drafts.push({
          type: 'function_call',
          call_id: item.call_id,
          name: item.name,
          arguments: item.arguments,
        });
    }
  }

  private seen(id: string): boolean {
    if (this.seenIds.has(id)) return true;
    this.seenIds.add(id);
    return false;
  }
}

type Block = { type: string; text?: string; image_url?: string };

function partsOf(content: string | Block[], param: string, fresh: boolean): DraftPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((block, index): DraftPart => {
    if (block.type === 'input_image') {
      const url = block.image_url!;
      return {
        type: 'image',
        slot: { url, param: `${param}.${index}.image_url`, fresh, image: null },
      };
    }
    return { type: 'text', text: block.text ?? '' };
  });
}

function textOf(blocks: Block[]): string {
  return blocks.map((block) => block.text ?? '').join('');
}

function slotsOf(draft: Draft): ImageSlot[] {
  if (draft.type === 'computer_call_output') return [draft.slot];
  if (draft.type !== 'message') return [];
  return draft.content.flatMap((part) => (part.type === 'image' ? [part.slot] : []));
}

function finish(draft: Draft): ConversationItem {
  if (draft.type === 'computer_call_output') {
    return { type: 'computer_call_output', call_id: draft.call_id, image: draft.slot.image };
  }
  if (draft.type !== 'message') return draft;
  return {
    ...draft,
    content: draft.content.map((part): Part =>
      part.type === 'text' ? part : { type: 'image', image: part.slot.image },
    ),
  };
}
