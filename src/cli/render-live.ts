/**
 * Replies as they stream, for the terminal (ARCHITECTURE.md#live-tokens): text deltas are written
 * as they arrive; a retried call's restart is marked and its text starts over; the `assistant`
 * message that follows prints only what was not streamed already (its tool calls, or all of it
 * when no stream was seen).
 */
import type { AssistantMessage, SessionEvent } from '../shared/events';
import type { StreamEvent } from '../shared/stream-events';
import { paint, renderMessage, visible, type RenderOptions } from './render';

export class LiveText {
  /** A message is streaming: message_start seen, message_stop not yet. */
  private open = false;
  private text = '';
  private atLineStart = true;
  /** The text of the last message streamed whole. */
  private shown: string | undefined;

  constructor(private readonly opts: RenderOptions) {}

  /** What to write for one stream event (possibly nothing). */
  write(e: StreamEvent): string {
    switch (e.type) {
      case 'message_start': {
        const restart =
          this.open && this.text
            ? `${this.breakLine()}${paint(this.opts.color, 'yellow', '↻ the model call is retried; its reply starts over')}\n`
            : '';
        this.open = true;
        this.text = '';
        return restart;
      }
      case 'content_block_delta': {
        if (e.delta.type !== 'text_delta') return '';
        this.text += e.delta.text;
        if (e.delta.text) this.atLineStart = e.delta.text.endsWith('\n');
        // Escaped per delta: a control character is one UTF-16 unit, never split between deltas.
        return visible(e.delta.text);
      }
      case 'message_stop':
        this.open = false;
        this.shown = this.text;
        return this.breakLine();
      default:
        return '';
    }
  }

  /** A newline if a stream left the cursor mid-line; call before printing whole lines. */
  breakLine(): string {
    if (this.atLineStart) return '';
    this.atLineStart = true;
    return '\n';
  }

  /** The lines of a history message; a reply's less the text already streamed. */
  lines(m: SessionEvent): string[] {
    if (m.type === 'assistant') return this.assistant(m);
    // A call cut by an interrupt never finishes its message: the next one starts a new reply, not a retry.
    if (m.type === 'result' || m.type === 'user') this.open = false;
    return renderMessage(m, this.opts);
  }

  private assistant(m: AssistantMessage): string[] {
    const text = m.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const streamed = this.shown !== undefined && this.shown === text;
    this.shown = undefined;
    this.open = false;
    const content = streamed ? m.message.content.filter((b) => b.type !== 'text') : m.message.content;
    return renderMessage({ ...m, message: { ...m.message, content } }, this.opts);
  }
}
