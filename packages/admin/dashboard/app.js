// The Granary dashboard: signs in with the admin token (kept for this tab only), reads the
// live samples of /v1/events (server-sent events, read with fetch so the token travels in the
// Authorization header, never in a URL), and draws them with uPlot. No build step, no CDN.
'use strict';

const HISTORY = 300;
const state = {
  token: sessionStorage.getItem('granary-token') || '',
  samples: [],
  charts: {},
  abort: null,
};

const $ = (id) => document.getElementById(id);
const fmt = (x, digits = 0) => (x === null || x === undefined ? '–' : Number(x).toFixed(digits));

async function api(path, init = {}) {
  const res = await fetch(path, {
    ...init,
    headers: { ...(init.headers || {}), authorization: `Bearer ${state.token}` },
  });
  if (res.status === 401) throw Object.assign(new Error('wrong token'), { status: 401 });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

async function signIn(token) {
  state.token = token;
  try {
    const info = await api('/v1');
    sessionStorage.setItem('granary-token', token);
    $('signin-panel').hidden = true;
    $('main').hidden = false;
    $('cluster').textContent = `${info.cluster} · asked ${info.member}`;
    connect();
  } catch (err) {
    $('signin-error').textContent =
      err.status === 401 ? 'That token was refused.' : String(err.message);
  }
}

async function connect() {
  if (state.abort) state.abort.abort();
  const abort = (state.abort = new AbortController());
  try {
    const res = await fetch('/v1/events', {
      headers: { authorization: `Bearer ${state.token}` },
      signal: abort.signal,
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    $('live').textContent = 'live';
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = event
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (data) onSample(JSON.parse(data));
      }
    }
  } catch {
    if (abort.signal.aborted) return;
  }
  $('live').textContent = 'reconnecting…';
  setTimeout(connect, 1000);
}

function onSample(s) {
  state.samples.push(s);
  if (state.samples.length > HISTORY) state.samples.shift();
  renderNumbers(s);
  renderMembers(s);
  renderShards(s);
  renderTop(s);
  renderCharts();
}

function renderNumbers(s) {
  const total = Object.values(s.activations).reduce((a, b) => a + b, 0);
  $('members-count').textContent = String(s.members.length);
  $('activations-total').textContent = String(total);
  $('call-rate').textContent = fmt(s.calls.rate);
  $('latency').textContent = `${fmt(s.calls.p50, 2)} / ${fmt(s.calls.p99, 2)}`;
  $('error-rate').textContent = fmt(s.calls.failedRate, 1);
  $('dead-letters').textContent = fmt(s.deadLettersRate, 1);
  $('errors-by-type').textContent = Object.entries(s.calls.errors)
    .map(([name, rate]) => `${name}: ${rate}/s`)
    .join(' · ');
}

function renderMembers(s) {
  const body = $('members').querySelector('tbody');
  body.replaceChildren(
    ...s.members.map((m) => {
      const tr = document.createElement('tr');
      tr.dataset.member = m.id;
      const status = m.answered ? m.status : 'not answering';
      // A kind's entry is the list of shards held, or only their count for a large kind.
      const shards = Object.values(m.shards).reduce(
        (n, l) => n + (typeof l === 'number' ? l : l.length),
        0,
      );
      for (const [text, cls] of [
        [m.id, ''],
        [status, `status-${m.answered ? m.status : 'missing'}`],
        [String(m.activations), ''],
        [String(shards), ''],
      ]) {
        const td = document.createElement('td');
        td.textContent = text;
        if (cls) td.className = cls;
        tr.append(td);
      }
      return tr;
    }),
  );
  $('not-answering').textContent = s.notAnswering.length
    ? `Not answering: ${s.notAnswering.map((n) => n.id).join(', ')}`
    : '';
}

function renderShards(s) {
  const moving = new Set(s.moving.map((m) => `${m.kind}/${m.shard}`));
  const rows = [];
  for (const m of s.members) {
    for (const [kind, shards] of Object.entries(m.shards)) {
      const row = document.createElement('div');
      row.className = 'shard-row';
      const who = document.createElement('span');
      who.className = 'who';
      who.textContent = `${m.id} · ${kind}`;
      const cells = document.createElement('div');
      cells.className = 'shards';
      if (typeof shards === 'number') {
        // Too many to draw one cell each (a kind of 16,384 shards): one cell with the count.
        const c = document.createElement('span');
        c.className = 'shard count';
        c.textContent = `${shards} shards`;
        cells.append(c);
        row.append(who, cells);
        rows.push(row);
        continue;
      }
      for (const shard of shards.sort((a, b) => a - b)) {
        const c = document.createElement('span');
        c.className = moving.has(`${kind}/${shard}`) ? 'shard moving' : 'shard';
        c.title = `${kind} shard ${shard}`;
        cells.append(c);
      }
      row.append(who, cells);
      rows.push(row);
    }
  }
  $('shard-map').replaceChildren(...rows);
}

function renderTop(s) {
  $('top-grains')
    .querySelector('tbody')
    .replaceChildren(
      ...s.top.map((g) => {
        const tr = document.createElement('tr');
        for (const text of [`${g.kind}/${g.identity}`, g.member, String(g.calls)]) {
          const td = document.createElement('td');
          td.textContent = text;
          tr.append(td);
        }
        return tr;
      }),
    );
}

function chart(id, series, data) {
  const el = $(id);
  const width = Math.max(320, el.clientWidth || 480);
  let c = state.charts[id];
  if (!c || c.series.length !== series.length + 1) {
    if (c) c.destroy();
    c = new uPlot(
      {
        width,
        height: 180,
        series: [
          {},
          ...series.map((label, i) => ({ label, stroke: COLORS[i % COLORS.length], width: 2 })),
        ],
      },
      data,
      el,
    );
    state.charts[id] = c;
  } else c.setData(data);
}

const COLORS = ['#4a78c2', '#e8a33d', '#1b7f3b', '#b3261e', '#7b4ab3', '#2a9ab3'];

function renderCharts() {
  const xs = state.samples.map((s) => s.t / 1000);
  chart('calls-chart', ['calls/s'], [xs, state.samples.map((s) => s.calls.rate)]);
  chart(
    'latency-chart',
    ['p50', 'p99'],
    [xs, state.samples.map((s) => s.calls.p50), state.samples.map((s) => s.calls.p99)],
  );
  const names = [...new Set(state.samples.flatMap((s) => Object.keys(s.calls.errors)))];
  chart('errors-chart', names.length ? names : ['errors/s'], [
    xs,
    ...(names.length
      ? names.map((n) => state.samples.map((s) => s.calls.errors[n] || 0))
      : [state.samples.map((s) => s.calls.failedRate)]),
  ]);
  const kinds = [...new Set(state.samples.flatMap((s) => Object.keys(s.activations)))];
  chart('activations-chart', kinds.length ? kinds : ['activations'], [
    xs,
    ...(kinds.length
      ? kinds.map((k) => state.samples.map((s) => s.activations[k] || 0))
      : [state.samples.map(() => 0)]),
  ]);
}

async function locate(kind, id) {
  try {
    const r = await api(`/v1/locate?kind=${encodeURIComponent(kind)}&id=${encodeURIComponent(id)}`);
    const lines = [
      `${r.kind}/${r.identity} → shard ${r.shard}`,
      r.owner
        ? `owner ${r.owner.id} (${r.owner.address}), epoch ${r.epoch}`
        : 'no owner holds its shard now',
      r.active
        ? `active: ${r.activation.activationId}, mailbox ${r.activation.mailboxDepth}, idle ${r.activation.idleMs} ms`
        : 'not active',
    ];
    $('locate-result').textContent = lines.join('\n');
  } catch (err) {
    $('locate-result').textContent = `error: ${err.message}`;
  }
}

window.addEventListener('DOMContentLoaded', () => {
  $('signin-form').addEventListener('submit', (e) => {
    e.preventDefault();
    void signIn($('token').value.trim());
  });
  $('locate-form').addEventListener('submit', (e) => {
    e.preventDefault();
    void locate($('locate-kind').value.trim(), $('locate-id').value.trim());
  });
  if (state.token) void signIn(state.token);
});
