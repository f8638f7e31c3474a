/**
 * A readable, streaming rendering of SDK messages for terminals (colour only on a TTY).
 */
import type { ResultMessage, SessionEvent, UUID } from '../shared/events';
import { emptyUsage, type Message } from '../shared/messages';
import { sdkApiMessage, type SDKUserContentBlock } from '../shared/sdk-shapes';

/** A transcript message has no event uuid; rendering it as an event gets the nil one. */
const NIL_UUID: UUID = '00000000-0000-0000-0000-000000000000';

export interface RenderOptions {
  color: boolean;
  /** Lines of each tool result to show. */
  resultLines?: number;
}

const codes = { dim: 2, bold: 1, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36 } as const;

/**
 * Control characters (C0 but tab and newline, a carriage return not before a newline, DEL, C1) and
 * the bidirectional overrides, which could recolour, move the cursor, clear the screen or reorder
 * what a person reads — a pending command disguised as another — shown as visible escapes
 * (`\x1b[31m`). Everything the CLI prints for people from model or tool text goes through it.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;

export function visible(s: string): string {
  return s.replace(CONTROL, (ch) => {
    if (ch === '\r') return '\\r';
    const code = ch.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** `x` with every string in it (keys too) made `visible`. */
export function visibleDeep<T>(x: T): T {
  if (typeof x === 'string') return visible(x) as T;
  if (Array.isArray(x)) return x.map((v) => visibleDeep(v)) as T;
  if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [visible(k), visibleDeep(v)])) as T;
  return x;
}

export function paint(on: boolean, code: keyof typeof codes, s: string): string {
  return on ? `\x1b[${codes[code]}m${s}\x1b[0m` : s;
}

function oneLine(s: string, max = 100): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function describeInput(input: unknown): string {
  if (!input || typeof input !== 'object') return '';
  const o = input as Record<string, unknown>;
  const main = o.command ?? o.file_path ?? o.pattern ?? o.description;
  if (typeof main === 'string') return oneLine(main, 80);
  return oneLine(JSON.stringify(o), 80);
}

/** The exact commands that answer a pending request. */
function approvalCommands(sessionId: string, requestId: string): string {
  return `durable-agent approve ${sessionId} ${requestId} [--always]  |  durable-agent deny ${sessionId} ${requestId} [--message "why"]`;
}

/** Render one message as zero or more lines; its text shown with control characters escaped. */
export function renderMessage(message: SessionEvent, opts: RenderOptions): string[] {
  const m = visibleDeep(message);
  const c = opts.color;
  switch (m.type) {
    case 'system':
      switch (m.subtype) {
        case 'init':
          return [paint(c, 'dim', `● session ${m.session_id} · model ${m.model} · ${m.permissionMode} · cwd ${m.cwd}`)];
        case 'api_retry':
          if (m.reason)
            return [paint(c, 'yellow', `⏸ model call held by the rate limiter (${m.reason}): ${oneLine(m.error_message, 100)}`)];
          return [
            paint(
              c,
              'yellow',
              `↻ model call failed (${m.error_status ?? 'network'}: ${oneLine(m.error_message, 80)}); retry ${m.attempt}/${m.max_retries} in ${(m.retry_delay_ms / 1000).toFixed(1)}s`,
            ),
          ];
        case 'permission_denied':
          return [paint(c, 'red', `⊘ ${m.tool_name} denied: ${m.message}`)];
        case 'permission_request':
          return [
            paint(c, 'yellow', `? ${m.tool_name}(${describeInput(m.tool_input)}) waits for approval (${m.request_id}): ${m.message}`),
            paint(c, 'dim', `    input: ${oneLine(JSON.stringify(m.tool_input) ?? '', 400)}`),
            paint(c, 'dim', `    answer: ${approvalCommands(m.session_id, m.request_id)}`),
          ];
        case 'permission_resolved': {
          const rules = m.rules_added.length ? ` (allowed from now on: ${m.rules_added.join(', ')})` : '';
          const how = {
            allow: 'allowed',
            deny: 'denied',
            timeout: 'not answered in time (denied)',
            cancelled: 'cancelled (the turn was interrupted)',
          }[m.behavior];
          return [paint(c, m.behavior === 'allow' ? 'green' : 'yellow', `  ${m.request_id} ${how}${rules}`)];
        }
        case 'hook_request':
          return [
            paint(c, 'dim', `… ${m.hook_event} callback hook waits for its client (${m.request_id}, up to ${m.timeout_ms / 1000} s)`),
          ];
        case 'tool_request':
          return [
            paint(
              c,
              'dim',
              `… ${m.tool_name} runs in its client's in-process MCP server (${m.request_id}, up to ${m.timeout_ms / 1000} s)`,
            ),
          ];
        case 'model_changed':
          return [paint(c, 'magenta', `⇄ model ${m.previous_model} → ${m.model} (${m.reason})`)];
        case 'warning':
          return [paint(c, 'yellow', `! ${m.message}`)];
        case 'workspace_restored':
          return [
            paint(
              c,
              'yellow',
              `⟲ tools host ${m.lost_host} lost: ${m.path} restored on ${m.host} from the checkpoint of turn ${m.turn} (${m.commit.slice(0, 12)})`,
            ),
          ];
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
        lines.push(
          ...[b.is_error ? paint(c, 'red', '  ✗ error') : paint(c, 'green', '  ✓'), ...shown, ...more].map((l) => paint(c, 'dim', l)),
        );
      }
      return lines;
    }
    case 'tool_progress':
      return [];
    case 'result':
      return renderSummary(m, opts);
  }
}

export function renderSummary(result: ResultMessage, opts: RenderOptions): string[] {
  const r = visibleDeep(result);
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
    const stamp = { uuid: NIL_UUID, session_id: '', seq: i, parent_tool_use_id: null };
    if (m.role === 'assistant') {
      const content = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
      const message = sdkApiMessage({ id: '', model: '', stop_reason: 'end_turn', usage: emptyUsage() }, content);
      lines.push(...renderMessage({ ...stamp, type: 'assistant', message }, opts));
    } else {
      const content =
        typeof m.content === 'string'
          ? m.content
          : m.content.filter((b): b is SDKUserContentBlock => b.type === 'text' || b.type === 'tool_result');
      lines.push(...renderMessage({ ...stamp, type: 'user', message: { role: 'user', content } }, opts));
    }
  });
  return lines;
}
