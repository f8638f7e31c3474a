/**
 * Server-sent events, read: the data of each event per the EventSource format (CR, LF or CRLF
 * line ends, comments, fields other than `data` skipped, multi-line data joined with newlines).
 * Pure; used by the model client (src/activities/model/chat-stream.ts) and by clients reading a
 * worker's live stream (src/client/live-sse.ts).
 */
/** Fed text as it arrives; hands back the data of each event it completes (event names are not kept). */
export class SseParser {
  private rest = '';
  private data: string[] = [];

  /** Feed text; returns the data of the events it completed. `end`: no more text follows. */
  push(text: string, end = false): string[] {
    const s = this.rest + text;
    const out: string[] = [];
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A CR that ends the text may be the first half of a CRLF: wait for what follows.
      if (c === 13 && i + 1 === s.length && !end) break;
      this.line(s.slice(start, i), out);
      if (c === 13 && s.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    this.rest = s.slice(start);
    if (end) {
      if (this.rest) this.line(this.rest, out);
      this.rest = '';
      this.line('', out);
    }
    return out;
  }

  private line(line: string, out: string[]): void {
    if (line === '') {
      if (this.data.length) out.push(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' a comment
    const colon = line.indexOf(':');
    if ((colon < 0 ? line : line.slice(0, colon)) !== 'data') return;
    const value = colon < 0 ? '' : line.slice(colon + 1);
    this.data.push(value.charCodeAt(0) === 32 ? value.slice(1) : value);
  }
}
