// The dashboard page (ARCHITECTURE.md#dashboard). Plain browser JavaScript, no build step: every
// value from a session is put in the page as text (textContent, never innerHTML), so a tool output
// holding markup shows as the characters it is. Live data arrives as server-sent events.
'use strict';

(() => {
  const CSRF = document.querySelector('meta[name="csrf-token"]').content;
  const app = document.getElementById('app');
  const conn = document.getElementById('conn');
  let config = { namespace: 'default', temporalUi: '' };

  /** h('div.a.b', {attrs}, children…): an element; strings become text nodes. */
  function h(tag, attrs, ...children) {
    const [name, ...classes] = tag.split('.');
    const el = document.createElement(name || 'div');
    if (classes.length) el.className = classes.join(' ');
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'style') for (const [p, x] of Object.entries(v)) el.style.setProperty(p, String(x));
      else if (k === 'text') el.textContent = String(v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
    return el;
  }
  const svg = (tag, attrs) => {
    const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    return el;
  };
  const usd = (x) => (typeof x === 'number' ? `$${x.toFixed(4)}` : '–');
  const num = (x) => (typeof x === 'number' ? x.toLocaleString('en-US') : '–');
  const ago = (iso) => {
    if (!iso) return '–';
    const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
    if (s < 60) return `${Math.floor(s)}s ago`;
    if (s < 3600) return `${Math.floor(s / 60)}m ago`;
    if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
    return `${Math.floor(s / 86400)}d ago`;
  };
  const sessionHref = (id) => `/s/${encodeURIComponent(id)}`;
  const batchHref = (id) => `/b/${encodeURIComponent(id)}`;
  const temporalHref = (id, runId) =>
    `${config.temporalUi}/namespaces/${encodeURIComponent(config.namespace)}/workflows/${encodeURIComponent(id)}${runId ? `/${encodeURIComponent(runId)}/history` : ''}`;
  const badge = (status) => h(`span.badge.${String(status).replace(/[^\w]/g, '_')}`, { 'data-status': status }, status);
  const json = (v) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));

  async function api(path, body) {
    const res = await fetch(path, {
      method: body ? 'POST' : 'GET',
      headers: body ? { 'content-type': 'application/json', 'x-csrf-token': CSRF } : {},
      body: body ? JSON.stringify(body) : undefined,
      credentials: 'same-origin',
    });
    const data = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
    if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
    return data;
  }

  function live(path, handlers) {
    const es = new EventSource(path);
    es.onopen = () => conn.classList.add('live');
    es.onerror = () => conn.classList.remove('live');
    for (const [event, fn] of Object.entries(handlers)) es.addEventListener(event, (e) => fn(JSON.parse(e.data)));
    es.addEventListener('end', () => {
      es.close();
      conn.classList.remove('live');
    });
    return es;
  }

  /** Runs an action and writes its result (or refusal) into `out`. */
  async function act(out, fn) {
    out.className = 'outcome';
    out.textContent = '…';
    try {
      const r = await fn();
      out.className = 'outcome ok';
      out.textContent = r.message || 'done';
    } catch (e) {
      out.className = 'outcome bad';
      out.textContent = e.message;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Sessions page

  const STATUSES = ['running', 'waiting_for_approval', 'waiting_for_input', 'completed', 'failed', 'interrupted'];

  function sessionsPage() {
    const params = new URLSearchParams(location.search);
    const form = h(
      'form.filters',
      { id: 'filters' },
      h(
        'select',
        { name: 'status', 'aria-label': 'status' },
        h('option', { value: '' }, 'any status'),
        STATUSES.map((s) => h('option', { value: s }, s)),
      ),
      h('input', { name: 'batch', placeholder: 'batch id', 'aria-label': 'batch' }),
      h('input', { name: 'model', placeholder: 'model', 'aria-label': 'model' }),
      h('input', { name: 'text', placeholder: 'session id starts with…', 'aria-label': 'text' }),
      h('button', { type: 'submit' }, 'Filter'),
    );
    for (const k of ['status', 'batch', 'model', 'text']) form.elements[k].value = params.get(k) || '';
    const body = h('tbody');
    const total = h('span.muted', { id: 'total' });
    const error = h('div');
    const older = h('button', { id: 'older', type: 'button' }, 'Older →');
    const newer = h('button', { id: 'newer', type: 'button' }, '← Newer');
    const head = ['Session', 'Status', 'Model', 'Batch', 'Turns', 'Cost', 'Age', 'Last activity'];
    const table = h(
      'table',
      { id: 'sessions' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          head.map((c) => h(`th${['Turns', 'Cost'].includes(c) ? '.num' : ''}`, {}, c)),
        ),
      ),
      body,
    );
    app.replaceChildren(h('h1', {}, 'Sessions'), form, error, table, h('div.pager', {}, newer, older, total));

    // Page tokens of the pages before this one, so "Newer" can go back.
    const trail = (params.get('trail') || '').split(',').filter(Boolean);
    const page = params.get('page') || '';
    let es;
    let next;
    const filterParams = () => {
      const p = new URLSearchParams();
      for (const k of ['status', 'batch', 'model', 'text']) if (form.elements[k].value) p.set(k, form.elements[k].value);
      return p;
    };
    const go = (p) => {
      history.pushState(null, '', `/?${p}`);
      es?.close();
      sessionsPage();
    };
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      go(filterParams());
    });
    form.elements.status.addEventListener('change', () => go(filterParams()));
    newer.disabled = !page;
    newer.addEventListener('click', () => {
      const p = filterParams();
      const t = trail.slice(0, -1);
      if (trail.at(-1)) p.set('page', trail.at(-1));
      if (t.length) p.set('trail', t.join(','));
      go(p);
    });
    older.addEventListener('click', () => {
      if (!next) return;
      const p = filterParams();
      p.set('page', next);
      p.set('trail', [...trail, page].join(','));
      go(p);
    });
    const q = filterParams();
    if (page) q.set('page', page);
    es = live(`/api/sessions/live?${q}`, {
      page(data) {
        if (data.error) return error.replaceChildren(h('div.error-box', {}, data.error));
        error.replaceChildren();
        next = data.nextPage;
        older.disabled = !next;
        total.textContent = `${num(data.total)} session${data.total === 1 ? '' : 's'}`;
        body.replaceChildren(
          ...data.rows.map((r) =>
            h(
              'tr',
              { 'data-session': r.sessionId },
              h('td', {}, h('a', { href: sessionHref(r.sessionId) }, r.sessionId)),
              h('td', {}, badge(r.status)),
              h('td', {}, r.model || '–', r.buildId ? h('span.muted', { title: 'worker build' }, ` · ${r.buildId}`) : ''),
              h('td', {}, r.batchId ? h('a', { href: batchHref(r.batchId) }, r.batchId) : '–'),
              h('td.num', {}, num(r.turns)),
              h('td.num', {}, usd(r.costUsd)),
              h('td', { title: r.startTime }, ago(r.startTime)),
              h('td', { title: r.lastActivity }, ago(r.lastActivity)),
            ),
          ),
        );
        if (data.rows.length === 0) body.append(h('tr', {}, h('td.muted', { colspan: head.length }, 'No sessions match.')));
      },
      failure(data) {
        error.replaceChildren(h('div.error-box', {}, data.error));
      },
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Session page

  function sessionPage(id) {
    const title = h('h1', {}, id);
    const meta = h('div.muted', { id: 'meta' });
    const convo = h('div.conversation', { id: 'conversation' });
    const stats = h('dl.stats', { id: 'stats' });
    const chart = svg('svg', { class: 'chart', viewBox: '0 0 300 140', preserveAspectRatio: 'none', id: 'cost-chart' });
    const perms = h('div', { id: 'permissions' });
    const permOut = h('div.outcome', { id: 'permission-outcome', role: 'status' });
    const ctlOut = h('div.outcome', { id: 'control-outcome', role: 'status' });
    const sendForm = h(
      'form',
      { id: 'send-form' },
      h('input', { type: 'text', name: 'text', placeholder: 'Follow-up message', 'aria-label': 'follow-up message' }),
      h('button', { type: 'submit' }, 'Send'),
    );
    const modelForm = h(
      'form',
      { id: 'model-form' },
      h('input', { type: 'text', name: 'model', placeholder: 'Model', 'aria-label': 'model' }),
      h('button', { type: 'submit' }, 'Switch model'),
    );
    const interrupt = h('button.danger', { id: 'interrupt', type: 'button' }, 'Interrupt');
    const controls = h('div.card.controls', {}, h('h2', {}, 'Controls'), interrupt, h('p'), sendForm, modelForm, ctlOut);
    app.replaceChildren(
      title,
      meta,
      h(
        'div.grid',
        {},
        h('section', {}, h('h2', {}, 'Conversation'), convo),
        h(
          'aside',
          {},
          h('div.card', {}, h('h2', {}, 'Waiting for you'), perms, permOut),
          controls,
          h('div.card', {}, h('h2', {}, 'Usage'), stats),
          h('div.card', {}, h('h2', {}, 'Cost over model calls'), chart),
        ),
      ),
    );

    interrupt.addEventListener('click', () => act(ctlOut, () => api(`/api/session/${encodeURIComponent(id)}/interrupt`, {})));
    sendForm.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = sendForm.elements.text.value;
      act(ctlOut, async () => {
        const r = await api(`/api/session/${encodeURIComponent(id)}/send`, { text });
        sendForm.elements.text.value = '';
        return r;
      });
    });
    modelForm.addEventListener('submit', (e) => {
      e.preventDefault();
      act(ctlOut, () => api(`/api/session/${encodeURIComponent(id)}/model`, { model: modelForm.elements.model.value }));
    });

    // -- the conversation
    const tools = new Map(); // tool_use_id → { el, state, result, children }
    const streams = new Map(); // parent id ('' for the top) → { el, text, thinking, open }
    const points = [];
    let cost = 0;
    const containerFor = (parent) => (parent && tools.get(parent)?.children) || convo;
    const autoscroll = () => {
      if (window.innerHeight + window.scrollY >= document.body.scrollHeight - 200) window.scrollTo(0, document.body.scrollHeight);
    };

    function toolCard(block, diff) {
      const state = h('span.state', {}, 'requested');
      const result = h('div.result');
      const children = h('div.children', { 'data-parent': block.id });
      const input = block.name === 'Bash' && typeof block.input?.command === 'string' ? block.input.command : json(block.input);
      const el = h(
        'div.tool',
        { 'data-tool-use-id': block.id, 'data-tool': block.name },
        h('div.head', {}, block.name, state),
        diff ? diffView(diff) : h('details', { open: true }, h('summary', {}, 'input'), h('pre.input', {}, input)),
        result,
        children,
      );
      tools.set(block.id, { el, state, result, children });
      return el;
    }

    function diffView(d) {
      const lines = d.hunks.flatMap((hk) => [
        h('div.hunk', {}, `@@ -${hk.oldStart},${hk.oldLines} +${hk.newStart},${hk.newLines} @@`),
        ...hk.lines.map((l) => h(`div.line${l[0] === '+' ? '.add' : l[0] === '-' ? '.del' : ''}`, {}, l)),
      ]);
      return h('div.diff', {}, h('div.file', {}, d.file), lines);
    }

    function resultText(content) {
      if (typeof content === 'string') return content;
      if (Array.isArray(content)) return content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
      return json(content);
    }

    function streamFor(parent) {
      let s = streams.get(parent);
      if (!s) {
        const text = h('div.text');
        const thinking = h('pre.thinking.muted');
        const el = h(
          'div.msg.assistant.streaming',
          { 'data-streaming': 'true' },
          h('div.who', {}, 'assistant · streaming'),
          thinking,
          text,
        );
        s = { el, text, thinking, stopped: false, attempts: 1 };
        streams.set(parent, s);
        containerFor(parent).append(el);
      }
      return s;
    }

    function onStreamEvent(m) {
      const parent = m.parent_tool_use_id || '';
      const ev = m.event;
      if (ev.type === 'message_start') {
        const s = streams.get(parent);
        if (s && !s.stopped) {
          // A new attempt before the previous one stopped: the call was retried; its text starts again.
          s.attempts++;
          s.text.textContent = '';
          s.thinking.textContent = '';
          s.el.querySelector('.who').textContent = `assistant · streaming (attempt ${s.attempts})`;
        } else if (s) {
          s.el.remove();
          streams.delete(parent);
        }
        streamFor(parent);
      } else if (ev.type === 'content_block_delta') {
        const s = streamFor(parent);
        if (ev.delta.type === 'text_delta') s.text.textContent += ev.delta.text;
        else if (ev.delta.type === 'thinking_delta') s.thinking.textContent += ev.delta.thinking;
      } else if (ev.type === 'message_stop') {
        const s = streams.get(parent);
        if (s) s.stopped = true;
      }
    }

    function notice(text, cls, parent) {
      containerFor(parent).append(h(`div.notice${cls ? `.${cls}` : ''}`, {}, text));
    }

    function onMessage({ message: m, costUsd, diffs }) {
      if (m.type === 'stream_event') return onStreamEvent(m);
      const parent = m.parent_tool_use_id || '';
      if (m.type === 'assistant') {
        streams.get(parent)?.el.remove();
        streams.delete(parent);
        const blocks = m.message.content.map((b) => {
          if (b.type === 'text') return h('div.text', {}, b.text);
          if (b.type === 'thinking') return h('details', {}, h('summary.muted', {}, 'thinking'), h('pre', {}, b.thinking));
          if (b.type === 'tool_use') return toolCard(b, diffs?.[b.id]);
          return h('div.muted', {}, `[${b.type}]`);
        });
        containerFor(parent).append(
          h('div.msg.assistant', { 'data-seq': m.seq }, h('div.who', {}, `assistant · ${m.message.model}`), blocks),
        );
        if (typeof costUsd === 'number' && !parent) {
          cost += costUsd;
          points.push(cost);
          drawChart();
        }
      } else if (m.type === 'user') {
        const content = m.message.content;
        const texts = [];
        for (const b of typeof content === 'string' ? [{ type: 'text', text: content }] : content) {
          if (b.type === 'tool_result' && tools.has(b.tool_use_id)) {
            const t = tools.get(b.tool_use_id);
            const text = resultText(b.content);
            t.state.textContent = b.is_error ? 'error' : 'done';
            t.result.replaceChildren(
              h(
                `details${b.is_error ? '.error' : ''}`,
                { open: text.length < 600 },
                h('summary', {}, b.is_error ? 'error' : `result (${text.length} chars)`),
                h('pre.output', {}, text),
              ),
            );
          } else if (b.type === 'text') texts.push(b.text);
        }
        if (texts.length)
          containerFor(parent).append(
            h('div.msg.user', { 'data-seq': m.seq }, h('div.who', {}, 'user'), h('div.text', {}, texts.join('\n'))),
          );
      } else if (m.type === 'tool_progress') {
        const t = tools.get(m.tool_use_id);
        if (t && t.state.textContent !== 'done' && t.state.textContent !== 'error')
          t.state.textContent = m.status === 'completed' ? 'finished' : 'running…';
      } else if (m.type === 'result') {
        containerFor(parent).append(
          h(
            `div.msg.resultmsg${m.is_error ? '.error' : ''}`,
            { 'data-result': m.subtype },
            h('div.who', {}, `result · ${m.subtype} · ${m.num_turns} turns · ${usd(m.total_cost_usd)}`),
            h('div.text', {}, m.result || (m.errors || []).join('\n') || m.exit_reason),
          ),
        );
      } else if (m.type === 'system') {
        switch (m.subtype) {
          case 'init':
            return notice(`session started · ${m.model} · ${m.cwd} · permission mode ${m.permissionMode}`, '', parent);
          case 'api_retry':
            return notice(
              `model call failed (${m.error_status ?? m.error}: ${m.error_message}); retry ${m.attempt}/${m.max_retries} in ${Math.round(m.retry_delay_ms / 100) / 10}s`,
              'retry',
              parent,
            );
          case 'compact_boundary':
            return containerFor(parent).append(
              h(
                'div.boundary',
                { 'data-compact': 'true' },
                `context compacted (${m.compact_metadata.trigger}, ${num(m.compact_metadata.pre_tokens)} tokens): ${m.summarized_messages} messages summarized, ${m.kept_messages} kept`,
              ),
            );
          case 'permission_request':
            return notice(`${m.request_id}: ${m.tool_name} waits for approval (${m.message})`, 'retry', parent);
          case 'permission_resolved':
            return notice(
              `${m.request_id}: ${m.behavior}${m.rules_added.length ? ` · rules added: ${m.rules_added.join(', ')}` : ''}`,
              '',
              parent,
            );
          case 'permission_denied':
            return notice(`${m.tool_name} denied: ${m.message}`, 'bad', parent);
          case 'model_changed':
            return notice(`model: ${m.previous_model} → ${m.model} (${m.reason})`, '', parent);
          case 'loop_detected':
          case 'warning':
            return notice(m.message, 'retry', parent);
          case 'hook_response':
            return notice(`hook ${m.hook_name} (${m.hook_event}): ${m.hook_outcome}`, m.hook_outcome === 'success' ? '' : 'bad', parent);
          default:
            return notice(`${m.subtype}`, '', parent);
        }
      }
      autoscroll();
    }

    function drawChart() {
      chart.replaceChildren();
      const W = 300;
      const H = 140;
      const pad = 24;
      chart.append(
        svg('line', { class: 'axis', x1: pad, y1: H - pad, x2: W - 4, y2: H - pad }),
        svg('line', { class: 'axis', x1: pad, y1: 4, x2: pad, y2: H - pad }),
      );
      if (!points.length) return;
      const max = Math.max(...points) || 1;
      const x = (i) => pad + (W - pad - 8) * (points.length === 1 ? 1 : i / (points.length - 1));
      const y = (v) => H - pad - ((H - pad - 8) * v) / max;
      chart.append(svg('polyline', { class: 'line', points: points.map((v, i) => `${x(i)},${y(v)}`).join(' ') }));
      const label = (t, a) => {
        const el = svg('text', a);
        el.textContent = t;
        return el;
      };
      chart.append(label(usd(max), { x: pad + 2, y: 12 }), label(`${points.length} calls`, { x: W - 50, y: H - 8 }));
      chart.setAttribute('data-points', String(points.length));
    }
    drawChart();

    // -- figures, pending requests and controls
    let shownRequests;
    function onDetail(d) {
      const s = d.state;
      const status = d.open ? (s ? s.status : 'running') : d.executionStatus.toLowerCase();
      meta.replaceChildren(
        badge(status),
        ' · ',
        s ? s.model : '',
        ' · started ',
        ago(d.startTime),
        d.batchId ? [' · batch ', h('a', { href: batchHref(d.batchId) }, d.batchId)] : '',
        d.buildId ? [' · build ', h('span', { id: 'build' }, d.buildId)] : '',
        ' · ',
        h('a', { href: temporalHref(id, d.runId), target: '_blank', rel: 'noopener', id: 'temporal-link' }, 'Open in Temporal UI'),
      );
      const u = d.usage;
      stats.replaceChildren(
        ...[
          ['Turns', num(s?.turnCount)],
          ['Input tokens', num(u?.inputTokens)],
          ['Output tokens', num(u?.outputTokens)],
          ['Cache read', num(u?.cacheReadInputTokens)],
          ['Cost', usd(u?.costUsd)],
          ['Permission mode', s?.permissionMode || '–'],
        ].flatMap(([k, v]) => [h('dt', {}, k), h('dd', { 'data-stat': k }, v)]),
      );
      if (modelForm.elements.model.value === '' && s) modelForm.elements.model.placeholder = s.model;
      for (const el of controls.querySelectorAll('button, input')) el.disabled = !d.open;
      const pending = d.pendingPermissions || [];
      const key = pending.map((p) => p.requestId).join(',');
      if (key === shownRequests) return;
      shownRequests = key;
      perms.replaceChildren(
        ...(pending.length
          ? pending.map((p) => {
              const msg = h('input', { type: 'text', placeholder: 'Tell the model why (deny)', 'aria-label': 'deny message' });
              const answer = (behavior, extra) =>
                act(permOut, () =>
                  api(`/api/session/${encodeURIComponent(id)}/permission`, { requestId: p.requestId, behavior, ...extra }),
                );
              return h(
                'div.permission',
                { 'data-request': p.requestId },
                h('div', {}, h('strong', {}, `${p.toolName}`), ` · ${p.requestId}`),
                h('pre', {}, p.toolName === 'Bash' && typeof p.input?.command === 'string' ? p.input.command : json(p.input)),
                h('div.muted', {}, p.message),
                h(
                  'div.actions',
                  {},
                  h('button.primary', { type: 'button', onclick: () => answer('allow') }, 'Approve'),
                  p.suggestions.length
                    ? h(
                        'button',
                        { type: 'button', title: `adds ${p.suggestions.join(', ')}`, onclick: () => answer('allow', { always: true }) },
                        'Always allow',
                      )
                    : null,
                  msg,
                  h('button.danger', { type: 'button', onclick: () => answer('deny', msg.value ? { message: msg.value } : {}) }, 'Deny'),
                ),
              );
            })
          : [h('div.muted', {}, 'No pending requests.')]),
      );
    }

    api('/api/session/' + encodeURIComponent(id))
      .then(onDetail)
      .catch((e) => app.replaceChildren(title, h('div.error-box', {}, e.message)));
    live(`/api/session/${encodeURIComponent(id)}/events`, {
      message: onMessage,
      detail: onDetail,
      failure: (d) => convo.append(h('div.error-box', {}, d.error)),
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Batch page

  function batchPage(id) {
    const bar = h('div.bar', { id: 'progress', role: 'progressbar' });
    const legend = h('div.legend', { id: 'legend' });
    const spend = h('div', { id: 'spend' });
    const body = h('tbody');
    const meta = h('div.muted');
    const error = h('div');
    const reportBody = h('tbody');
    const chart = svg('svg', { id: 'report-chart', role: 'img', 'aria-label': 'resolve rate and cost per task, per model' });
    app.replaceChildren(
      h('h1', {}, `Batch ${id}`),
      meta,
      error,
      h('div.card', {}, h('h2', {}, 'Progress'), bar, legend, spend),
      h(
        'div.card',
        { id: 'report-card' },
        h('h2', {}, 'Report'),
        h(
          'table',
          { id: 'report' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              REPORT_COLUMNS.map(([label], i) => h(`th${i ? '.num' : ''}`, {}, label)),
            ),
          ),
          reportBody,
        ),
        chart,
        h(
          'div.muted',
          {},
          'Resolved: verdict pass, as a share of every job. Errors: no pass or fail (the job failed or was cancelled, or verify could not run). Cost, turns and time per task: over the jobs that ran.',
        ),
      ),
      h(
        'div',
        {},
        h('a', { href: `/api/batch/${encodeURIComponent(id)}/export?format=jsonl`, id: 'export-jsonl' }, 'Export JSONL'),
        ' · ',
        h('a', { href: `/api/batch/${encodeURIComponent(id)}/export?format=csv`, id: 'export-csv' }, 'Export CSV'),
        ' · ',
        h('a', { href: `/?batch=${encodeURIComponent(id)}` }, 'Sessions of this batch'),
      ),
      h(
        'table',
        { id: 'jobs' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['#', 'Job', 'Status', 'Verdict', 'Changes', 'Turns', 'Cost', 'Session', 'Result'].map((c) =>
              h(`th${['Turns', 'Cost'].includes(c) ? '.num' : ''}`, {}, c),
            ),
          ),
        ),
        body,
      ),
    );
    const SEGMENTS = [
      ['completed', 'done', 'var(--ok)'],
      ['failed', 'failed', 'var(--bad)'],
      ['cancelled', 'cancelled', '#d27a70'],
      ['skipped', 'skipped', 'var(--skip)'],
      ['running', 'running', 'var(--run)'],
    ];
    const onBatch = (b) => {
      if (b.error) return error.replaceChildren(h('div.error-box', {}, b.error));
      error.replaceChildren();
      const p = b.progress || {};
      const total = p.total || (b.jobs || []).length || 0;
      const skipped = p.skipped ?? (b.jobs || []).filter((j) => j.status === 'skipped_budget').length;
      const counts = {
        completed: p.completed || 0,
        failed: p.failed || 0,
        cancelled: p.cancelled || 0,
        skipped,
        running: Array.isArray(p.running) ? p.running.length : p.running || 0,
      };
      const finished = counts.completed + counts.failed + counts.cancelled + counts.skipped;
      const queued = Math.max(0, total - finished - counts.running);
      bar.replaceChildren(
        ...SEGMENTS.map(([k]) =>
          h(`div.seg-${k}`, {
            style: { width: `${total ? (100 * counts[k]) / total : 0}%` },
            'data-count': counts[k],
            title: `${counts[k]} ${k}`,
          }),
        ),
      );
      bar.setAttribute('aria-valuenow', String(finished));
      bar.setAttribute('aria-valuemax', String(total));
      bar.setAttribute('data-done', String(finished === total && total > 0));
      legend.replaceChildren(
        ...SEGMENTS.map(([k, label, color]) => h('span', { style: { '--c': color } }, `${label} ${counts[k]}`)),
        h('span', { style: { '--c': '#e8ebf0' } }, `queued ${queued}`),
        h('strong', { id: 'progress-text' }, `${finished}/${total} finished`),
      );
      const budget = p.maxBudgetUsd;
      spend.replaceChildren(
        ...[
          h(
            'span',
            { id: 'spend-text' },
            `Spent ${usd(p.costUsd)}${typeof budget === 'number' ? ` of ${usd(budget)} budget` : ' (no budget set)'}`,
          ),
          typeof budget === 'number'
            ? h('div.bar', {}, h('div.seg-running', { style: { width: `${Math.min(100, (100 * (p.costUsd || 0)) / (budget || 1))}%` } }))
            : null,
        ].filter(Boolean),
      );
      meta.replaceChildren(
        badge(b.executionStatus.toLowerCase()),
        ` · concurrency ${p.concurrency ?? '–'} · ${num(p.turns)} turns · started ${ago(b.startTime)} · `,
        h('a', { href: temporalHref(id), target: '_blank', rel: 'noopener' }, 'Open in Temporal UI'),
      );
      if (b.report) renderReport(b.report, reportBody, chart);
      if (!b.jobs) return;
      body.replaceChildren(
        ...b.jobs.map((j) =>
          h(
            'tr',
            { 'data-job': j.id },
            h('td', {}, j.index),
            h('td', {}, j.id),
            h('td', {}, badge(j.status)),
            h('td', {}, j.verdict ? h(`span.verdict.${j.verdict}`, { 'data-verdict': j.verdict }, j.verdict) : '–'),
            h('td', {}, j.diffStat ? `${j.diffStat.filesChanged} files +${j.diffStat.insertions} −${j.diffStat.deletions}` : '–'),
            h('td.num', {}, num(j.turns)),
            h('td.num', {}, usd(j.costUsd)),
            h('td', {}, h('a', { href: sessionHref(j.sessionId) }, j.sessionId)),
            h('td.wrap', {}, (j.result || j.error || '').slice(0, 200)),
          ),
        ),
      );
    };
    live(`/api/batch/${encodeURIComponent(id)}/live`, {
      batch: onBatch,
      failure: (d) => error.replaceChildren(h('div.error-box', {}, d.error)),
    });
  }

  const pct = (x) => (typeof x === 'number' ? `${(100 * x).toFixed(1)}%` : '–');
  const secs = (ms) => (typeof ms === 'number' ? `${(ms / 1000).toFixed(1)}s` : '–');
  /** The columns of `durable-agent report` (src/client/batch-report.ts computes the figures). */
  const REPORT_COLUMNS = [
    ['Model', (m) => m.model],
    ['Jobs', (m) => num(m.jobs)],
    ['Resolved', (m) => (m.resolvedShare === null ? '–' : `${m.resolved} (${pct(m.resolvedShare)})`)],
    ['Errors', (m) => num(m.errors)],
    ['Skipped', (m) => num(m.skipped)],
    ['Cost', (m) => usd(m.costUsd.total)],
    ['Cost/task', (m) => usd(m.costUsd.mean ?? undefined)],
    ['Median cost', (m) => usd(m.costUsd.median ?? undefined)],
    ['Turns/task', (m) => (typeof m.turnsMean === 'number' ? m.turnsMean.toFixed(1) : '–')],
    ['Median time', (m) => secs(m.durationMsMedian ?? undefined)],
  ];

  /** The report table, and a bar chart: each model's resolve rate (of 100%) and cost per task (of the largest). */
  function renderReport(report, tbody, chart) {
    const models = report.models || [];
    tbody.replaceChildren(
      ...models.map((m) =>
        h(
          'tr',
          { 'data-model': m.model },
          REPORT_COLUMNS.map(([, cell], i) => h(`td${i ? '.num' : ''}`, {}, cell(m))),
        ),
      ),
    );
    const W = 640;
    const LABEL = 180;
    const ROW = 46;
    const barW = W - LABEL - 90;
    const maxCost = Math.max(0, ...models.map((m) => m.costUsd.mean || 0));
    chart.setAttribute('viewBox', `0 0 ${W} ${Math.max(1, models.length) * ROW + 24}`);
    chart.setAttribute('width', String(W));
    const parts = [];
    const text = (x, y, s, attrs) => {
      const t = svg('text', { x, y, 'font-size': 12, ...attrs });
      t.textContent = s;
      return t;
    };
    models.forEach((m, i) => {
      const y = 8 + i * ROW;
      const share = m.resolvedShare ?? 0;
      const cost = m.costUsd.mean ?? 0;
      parts.push(text(0, y + 22, m.model.length > 26 ? `${m.model.slice(0, 25)}…` : m.model, { 'data-model': m.model }));
      parts.push(svg('rect', { x: LABEL, y, width: Math.max(1, share * barW), height: 16, fill: 'var(--ok)', 'data-bar': 'resolved' }));
      parts.push(
        text(
          LABEL + Math.max(1, share * barW) + 6,
          y + 13,
          m.resolvedShare === null ? 'no verdicts (no verify command)' : `${pct(m.resolvedShare)} resolved`,
        ),
      );
      const cw = maxCost > 0 ? (cost / maxCost) * barW : 1;
      parts.push(svg('rect', { x: LABEL, y: y + 19, width: Math.max(1, cw), height: 16, fill: 'var(--run)', 'data-bar': 'cost' }));
      parts.push(text(LABEL + Math.max(1, cw) + 6, y + 32, `${usd(m.costUsd.mean ?? undefined)}/task`));
    });
    parts.push(text(LABEL, models.length * ROW + 20, 'green: resolve rate (of all jobs) · blue: mean cost per task', { fill: '#6b7280' }));
    chart.replaceChildren(...parts);
  }

  // ---------------------------------------------------------------------------------------------

  function route() {
    const parts = location.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (parts[0] === 's' && parts[1]) return sessionPage(parts[1]);
    if (parts[0] === 'b' && parts[1]) return batchPage(parts[1]);
    return sessionsPage();
  }
  window.addEventListener('popstate', () => location.reload());
  api('/api/config')
    .then((c) => {
      config = c;
      // Actions need the token the printed URL sets (ARCHITECTURE.md#dashboard); say so up front.
      if (c.canAct === false)
        document
          .querySelector('header.top')
          .append(h('span.readonly', { id: 'readonly', text: 'read-only: open the URL printed by durable-agent ui to act' }));
    })
    .finally(route);
})();
