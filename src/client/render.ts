/**
 * A readable, streaming rendering of SDK messages for terminals (colour only on a TTY).
 */
import type { ResultMessage, SDKMessage } from '../shared/events';
import { emptyUsage, type Message } from '../shared/messages';

export interface RenderOptions {
  color: boolean;
  /** Lines of each tool result to show. */
  resultLines?: number;
}

const codes = { dim: 2, bold: 1, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36 } as const;

function paint(on: boolean, code: keyof typeof codes, s: string): string {
  return on ? `\x1b[${codes[code]}m${s}\x1b[0m` : s;
}

function oneLine(s: string, max = 100): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function describeInput(input: unknown): string {
  if (!input || typeof input !== 'object') return '';
  const o = input as Record<string, unknown>;
  const main = o.command ?? o.file_path ?? o.pattern ?? o.description;
  if (typeof main === 'string') return oneLine(main, 80);
  return oneLine(JSON.stringify(o), 80);
}

/** Render one message as zero or more lines. */
export function renderMessage(m: SDKMessage, opts: RenderOptions): string[] {
  const c = opts.color;
  switch (m.type) {
    case 'system':
      switch (m.subtype) {
        case 'init':
          return [paint(c, 'dim', `● session ${m.session_id} · model ${m.model} · ${m.permissionMode} · cwd ${m.cwd}`)];
        case 'api_retry':
          return [
            paint(c, 'yellow', `↻ model call failed (${m.error_status ?? 'network'}: ${oneLine(m.error, 80)}); retry ${m.attempt}/${m.max_retries} in ${(m.retry_delay_ms / 1000).toFixed(1)}s`),
          ];
        case 'permission_denied':
          return [paint(c, 'red', `⊘ ${m.tool_name} denied: ${m.message}`)];
        case 'model_changed':
          return [paint(c, 'magenta', `⇄ model ${m.previous_model} → ${m.model} (${m.reason})`)];
        case 'warning':
          return [paint(c, 'yellow', `! ${m.message}`)];
      }
      return [];
    case 'assistant': {
      const lines: string[] = [];
      for (const b of m.message.content) {
        if (b.type === 'text' && b.text.trim()) lines.push(b.text.trim());
        if (b.type === 'tool_use') lines.push(paint(c, 'cyan', `→ ${b.name}(${describeInput(b.input)})`));
      }
      return lines;
    }
    case 'user': {
      if (typeof m.message.content === 'string') return [paint(c, 'bold', `> ${m.message.content}`)];
      const lines: string[] = [];
      for (const b of m.message.content) {
        if (b.type === 'text') lines.push(paint(c, 'bold', `> ${b.text}`));
        if (b.type !== 'tool_result') continue;
        const body = b.content.split('\n');
        const shown = body.slice(0, opts.resultLines ?? 4).map((l) => `    ${l.slice(0, 160)}`);
        const more = body.length > shown.length ? [`    … ${body.length - shown.length} more lines`] : [];
        lines.push(...[b.is_error ? paint(c, 'red', '  ✗ error') : paint(c, 'green', '  ✓'), ...shown, ...more].map((l) => paint(c, 'dim', l)));
      }
      return lines;
    }
    case 'tool_progress':
      return [];
    case 'result':
      return renderSummary(m, opts);
  }
}

export function renderSummary(r: ResultMessage, opts: RenderOptions): string[] {
  const c = opts.color;
  const tokens = r.usage.input_tokens + r.usage.cache_read_input_tokens + r.usage.output_tokens;
  const head = r.is_error
    ? paint(c, 'red', `✗ ${r.subtype} (${r.exit_reason})${r.errors?.length ? `: ${r.errors.join('; ')}` : ''}`)
    : paint(c, 'green', `✓ ${r.subtype}`);
  return [
    head,
    paint(
      c,
      'dim',
      `  turns ${r.num_turns} · tokens ${tokens} (in ${r.usage.input_tokens}, cached ${r.usage.cache_read_input_tokens}, out ${r.usage.output_tokens}) · cost $${r.total_cost_usd.toFixed(6)} · ${(r.duration_ms / 1000).toFixed(1)}s`,
    ),
  ];
}

/** Render a transcript (`durable-agent show`): the prompt and follow-ups as `> …`, replies and tool results as in the live stream. */
export function renderTranscript(messages: Message[], opts: RenderOptions): string[] {
  const lines: string[] = [];
  messages.forEach((m, i) => {
    const stamp = { uuid: '', session_id: '', seq: i, parent_tool_use_id: null };
    if (m.role === 'assistant') {
      const content = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
      const message = { id: '', type: 'message' as const, role: 'assistant' as const, model: '', content, stop_reason: 'end_turn' as const, usage: emptyUsage() };
      lines.push(...renderMessage({ ...stamp, type: 'assistant', message }, opts));
    } else {
      lines.push(...renderMessage({ ...stamp, type: 'user', message: { role: 'user', content: m.content } }, opts));
    }
  });
  return lines;
}
