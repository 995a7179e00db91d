'use strict';
// Tonearm's page: the API is docs/web-api.md. Nothing here may throw into the console during normal use: every
// request goes through api(), which turns failures into the alert line and answers undefined.

const $ = id => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const ICONS = {
  play: 'M8 5v14l11-7z',
  pause: 'M6 5h4v14H6zm8 0h4v14h-4z',
  previous: 'M6 5h2v14H6zm3.5 7L19 5v14z',
  next: 'M16 5h2v14h-2zM5 5l9.5 7L5 19z',
  up: 'M12 5l7 7h-5v7h-4v-7H5z',
  down: 'M12 19l-7-7h5V5h4v7h5z',
  remove: 'M6.4 5L12 10.6 17.6 5 19 6.4 13.4 12l5.6 5.6-1.4 1.4-5.6-5.6L6.4 19 5 17.6l5.6-5.6L5 6.4z',
  enqueue: 'M11 5h2v6h6v2h-6v6h-2v-6H5v-2h6z',
  grip: 'M8 5h3v3H8zm5 0h3v3h-3zM8 10.5h3v3H8zm5 0h3v3h-3zM8 16h3v3H8zm5 0h3v3h-3z',
};

function icon(name) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', ICONS[name]);
  svg.append(path);
  return svg;
}

function h(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  e.append(...kids.filter(k => k != null));
  return e;
}

function iconButton(act, label, name = act) {
  return h('button', {type: 'button', class: 'icon', 'data-act': act, 'aria-label': label, title: label}, icon(name));
}

function fmt(s) {
  if (s == null || !isFinite(s)) return '';
  s = Math.max(0, Math.floor(s));
  const hms = [Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60];
  const two = n => String(n).padStart(2, '0');
  return hms[0] ? `${hms[0]}:${two(hms[1])}:${two(hms[2])}` : `${hms[1]}:${two(hms[2])}`;
}

function fileName(uri) {
  try {
    const u = new URL(uri);
    return decodeURIComponent(u.pathname.split('/').filter(Boolean).pop() || u.host) || uri;
  } catch { return uri; }
}

const trackName = t => t.title || fileName(t.uri);
const artistsOf = t => (t.artists || []).join(', ');

// ---- Requests and messages ----

let alertTimer = 0, noticeTimer = 0;

function showProblem(p) {
  const box = $('alert');
  const text = p?.title ? (p.detail ? `${p.title}: ${p.detail}` : p.title) : 'Something went wrong';
  const close = iconButton('dismiss', 'Dismiss', 'remove');
  close.addEventListener('click', () => box.replaceChildren());
  box.replaceChildren(h('span', {text}), close);
  clearTimeout(alertTimer);
  alertTimer = setTimeout(() => box.replaceChildren(), 10000);
}

function notice(text) {
  $('notice').textContent = text;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { $('notice').textContent = ''; }, 6000);
}

// Answers the parsed body, true for an empty one, undefined on any failure (shown in the alert line unless quiet).
async function api(method, path, body, quiet = false) {
  const init = {method, headers: {Accept: 'application/json'}};
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try { res = await fetch('/api/v1' + path, init); } catch {
    // While the socket is down the status line already says so.
    if (!quiet && conn === 'open') showProblem({title: 'No answer', detail: 'the player could not be reached'});
    return undefined;
  }
  if (res.status === 401 && path !== '/login') { showLogin(); return undefined; }
  let data = true;
  try {
    const text = await res.text();
    if (text) data = JSON.parse(text);
  } catch { data = res.ok ? true : null; }
  if (res.ok) return data;
  if (!quiet) showProblem(data?.title ? data : {title: `${res.status} ${res.statusText}`});
  return undefined;
}

// ---- Connection ----

let conn = 'connecting', socket = null, backoff = 500, retryTimer = 0, wsSeq = null, gapTimer = 0;

function setConn(s) {
  conn = s;
  const el = $('connection');
  el.dataset.state = s;
  document.body.dataset.conn = s;
  el.textContent = s === 'open' ? '' : s === 'closed' ? 'Reconnecting…' : s === 'login' ? 'Log in to connect' : 'Connecting…';
}

function showLogin() {
  if (socket) socket.close();
  setConn('login');
  $('login').hidden = false;
  $('password').focus();
}

async function connect() {
  clearTimeout(retryTimer);
  if (socket) return;
  // A plain request first: a WebSocket refused for a missing login says nothing about why.
  const s = await api('GET', '/state', undefined, true);
  if (conn === 'login') return;
  if (!s) { retry(); return; }
  stateSeq = -Infinity; // a restarted daemon counts from the start again, its queue versions too
  queue.version = null;
  queueAsked = null;
  applyState(s);
  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/v1/events`);
  socket = ws;
  wsSeq = null;
  ws.onmessage = e => {
    let m;
    try { m = JSON.parse(e.data); } catch { return; }
    onEvent(m);
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = null;
    if (conn !== 'login') { setConn('closed'); retry(); }
  };
}

function retry() {
  if (conn !== 'login' && conn !== 'connecting') setConn('closed');
  retryTimer = setTimeout(connect, backoff);
  backoff = Math.min(backoff * 2, 5000);
}

// The state names the queue's version, so the queue is fetched again only when it really changed.
async function resync() {
  const s = await api('GET', '/state', undefined, true);
  if (s) applyState(s);
}

function onEvent(m) {
  if (typeof m.sequence === 'number') {
    // The server follows a gap with a state of its own and folds bursts of queue edits into one frame, so a gap
    // is only acted on when no state comes soon after.
    if (m.type !== 'state' && wsSeq != null && m.sequence > wsSeq + 1) {
      clearTimeout(gapTimer);
      gapTimer = setTimeout(resync, 400);
    }
    wsSeq = wsSeq == null ? m.sequence : Math.max(wsSeq, m.sequence);
  }
  switch (m.type) {
    case 'state':
      clearTimeout(gapTimer);
      applyState(m.state);
      if (conn !== 'open') {
        setConn('open');
        backoff = 500;
        loadShares();
      }
      break;
    case 'seeked':
      if (m.sequence >= stateSeq) { anchor(m.position); kick(); }
      break;
    case 'tick':
      if (m.id === state?.track?.id && m.sequence >= stateSeq) {
        anchor(m.position);
        if (m.length != null && m.length !== state.track.length) { state.track.length = m.length; renderLength(); }
        kick();
      }
      break;
    case 'queue':
      wantQueue(m.version);
      break;
    case 'lyrics':
      loadLyrics();
      break;
    case 'lyricsLine':
      if (m.id === state?.track?.id) markLine(m.index);
      break;
    case 'trackFailed':
      showProblem({title: `Could not play ${fileName(m.uri)}`, detail: m.error?.detail});
      break;
    case 'outputFailed':
      showProblem({title: `Output ${m.name} failed`, detail: m.message});
      break;
    case 'offer':
    case 'offerClosed':
      loadShares();
      break;
    case 'received':
      notice(`Received ${fileName(m.uri)}`);
      break;
    case 'scan':
      notice(m.finished
        ? `Library scan done: ${m.added} added, ${m.updated} updated, ${m.removed} removed, ${m.failed} failed`
        : `Scanning the library: ${m.done} of ${m.total}`);
      break;
  }
}

// ---- Now playing ----

let state = null, stateSeq = -Infinity;

function applyState(s) {
  if (!s || s.sequence < stateSeq) return;
  stateSeq = s.sequence;
  const old = state;
  state = s;
  anchor(s.position);
  const t = s.track;
  const changed = old?.track?.id !== t?.id || old?.track?.uri !== t?.uri;
  $('title').textContent = t ? trackName(t) : 'Nothing playing';
  $('artist').textContent = t ? artistsOf(t) : '';
  $('album').textContent = t?.album || t?.station || '';
  document.title = t ? `${trackName(t)} – Tonearm` : 'Tonearm';
  const art = $('art');
  if (!t || !t.art) art.hidden = true;
  else if (art.getAttribute('src') !== t.art) { art.hidden = false; art.src = t.art; }

  const playing = s.status === 'Playing';
  const pp = $('playpause');
  if (pp.dataset.playing !== String(playing)) {
    pp.dataset.playing = String(playing);
    pp.setAttribute('aria-label', playing ? 'Pause' : 'Play');
    pp.title = playing ? 'Pause' : 'Play';
    pp.replaceChildren(icon(playing ? 'pause' : 'play'));
  }
  $('previous').disabled = !s.canGoPrevious;
  $('next').disabled = !s.canGoNext;
  $('shuffle').setAttribute('aria-pressed', String(!!s.shuffle));
  $('loop').textContent = `Repeat: ${{None: 'off', Playlist: 'queue', Track: 'track'}[s.loop] || 'off'}`;
  $('buffering').textContent = s.buffering < 100 ? `Buffering ${s.buffering}%` : '';
  if (performance.now() - volumeTouched > 1500) $('volume').value = s.volume;
  renderOutputs(s);
  renderCrossfade(s.crossfade || 0);
  slider.setAttribute('aria-disabled', String(!s.canSeek));
  renderLength();
  markCurrent();
  if (changed) { loadWave(); loadLyrics(); }
  markLine(s.lyricsLine ? s.lyricsLine.index : -1);
  wantQueue(s.queueVersion);
  kick();
}

let outputsKey = '';
function renderOutputs(s) {
  const sel = $('output');
  const key = JSON.stringify(s.outputs);
  // Rebuilt only when the list changes, so an open picker is not closed under the user.
  if (key !== outputsKey) {
    outputsKey = key;
    sel.replaceChildren(...(s.outputs || []).map(o =>
      h('option', {value: o.name, text: o.detail ? `${o.name} (${o.detail})` : o.name})));
  }
  sel.value = s.output;
  $('output-problem').textContent = s.outputProblem || '';
}

function renderCrossfade(seconds) {
  const sel = $('crossfade');
  // The usual lengths, and whatever was set elsewhere (tonearm crossfade 7, mpc crossfade 3).
  const wanted = [...new Set([0, 2, 4, 6, 8, 10, 12, seconds])].sort((a, b) => a - b);
  if ([...sel.options].map(o => o.value).join() !== wanted.join()) {
    sel.replaceChildren(...wanted.map(v => h('option', {value: String(v), text: v ? `Crossfade ${v} s` : 'No crossfade'})));
  }
  sel.value = String(seconds);
}

// ---- Position: a waveform on a canvas, moved on smoothly between events ----

const slider = $('position'), canvas = slider.querySelector('canvas'), ctx = canvas.getContext('2d');
const base = {value: 0, at: 0};
let drag = null, wave = null, waveFor = null, shape = null, colors = null;
let frameId = 0, drawnX = -1, shownSecond = -1;

function anchor(p) { base.value = p || 0; base.at = performance.now(); }
const trackLength = () => state?.track?.length || 0;
const seekable = () => !!(state?.canSeek && trackLength());

function position() {
  if (!state) return 0;
  let p = base.value;
  if (state.status === 'Playing') p += (performance.now() - base.at) / 1000 * (state.rate || 1);
  const len = trackLength();
  return Math.max(0, len ? Math.min(p, len) : p);
}

function renderLength() {
  const len = trackLength();
  slider.setAttribute('aria-valuemax', String(Math.round(len)));
  $('length').textContent = fmt(len || null);
  shownSecond = -1;
}

function readColors() {
  const cs = getComputedStyle(slider);
  colors = {played: cs.getPropertyValue('--played').trim(), rest: cs.getPropertyValue('--rest').trim()};
  drawnX = -1;
}

function fitCanvas() {
  const r = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(slider.clientWidth * r));
  canvas.height = Math.max(1, Math.round(slider.clientHeight * r));
  shape = null;
  drawnX = -1;
  kick();
}

// The track's peaks (or, without them, a plain bar) as one path, coloured twice: played and not.
function buildShape() {
  const W = canvas.width, H = canvas.height, r = window.devicePixelRatio || 1;
  const p = new Path2D();
  if (!wave) {
    const bar = Math.round(6 * r);
    p.rect(0, Math.round((H - bar) / 2), W, bar);
    return p;
  }
  const n = wave.length / 2, step = 3 * r, bars = Math.max(1, Math.floor(W / step)), mid = H / 2;
  for (let b = 0; b < bars; b++) {
    const from = Math.floor(b * n / bars), to = Math.max(from + 1, Math.floor((b + 1) * n / bars));
    let lo = 0, hi = 0;
    for (let i = from; i < to && i < n; i++) { lo = Math.min(lo, wave[2 * i]); hi = Math.max(hi, wave[2 * i + 1]); }
    const top = mid - hi * mid * 0.95, height = Math.max(r, (hi - lo) * mid * 0.95);
    p.rect(b * step, top, step - r, height);
  }
  return p;
}

function draw(x) {
  if (!colors) readColors();
  if (!shape) shape = buildShape();
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = colors.rest;
  ctx.fill(shape);
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, 0, x, canvas.height);
  ctx.clip();
  ctx.fillStyle = colors.played;
  ctx.fill(shape);
  ctx.restore();
}

function frame() {
  frameId = 0;
  const p = drag != null ? drag : position(), len = trackLength();
  const x = len ? Math.round(p / len * canvas.width) : 0;
  if (x !== drawnX || !shape) { draw(x); drawnX = x; }
  const sec = Math.floor(p);
  if (sec !== shownSecond) {
    shownSecond = sec;
    slider.setAttribute('aria-valuenow', String(Math.min(sec, Math.round(len)) || 0));
    slider.setAttribute('aria-valuetext', len ? `${fmt(p)} of ${fmt(len)}` : fmt(p));
    $('elapsed').textContent = fmt(p);
  }
  if (state?.status === 'Playing') frameId = requestAnimationFrame(frame);
}

function kick() { if (!frameId) frameId = requestAnimationFrame(frame); }

function peaks(d) {
  const ch = d.channels || 1, data = d.data;
  if (!Array.isArray(data) || data.length < 2 * ch) return null;
  const n = Math.floor(data.length / (2 * ch)), out = new Float32Array(2 * n);
  let top = 1;
  for (let i = 0; i < n; i++) {
    let lo = 0, hi = 0;
    for (let c = 0; c < ch; c++) { lo = Math.min(lo, data[(i * ch + c) * 2]); hi = Math.max(hi, data[(i * ch + c) * 2 + 1]); }
    out[2 * i] = lo;
    out[2 * i + 1] = hi;
    top = Math.max(top, -lo, hi);
  }
  // Scaled to the loudest peak, so a quiet recording still shows its shape.
  for (let i = 0; i < out.length; i++) out[i] /= top;
  return out;
}

async function loadWave() {
  const t = state?.track;
  waveFor = t ? t.id : null;
  wave = null;
  shape = null;
  kick();
  if (!t || !t.length) return;
  const width = Math.min(2000, Math.max(200, Math.round(slider.clientWidth)));
  const d = await api('GET', `/waveform/${t.id}?width=${width}`, undefined, true);
  if (waveFor !== t.id || !d) return;
  wave = peaks(d);
  shape = null;
  drawnX = -1;
  kick();
}

function seekTo(p) {
  if (!seekable()) return;
  anchor(p);
  kick();
  api('POST', '/player/seek', {position: p}).then(applyState);
}

function seekBy(offset) {
  if (!seekable()) return;
  anchor(Math.min(trackLength(), Math.max(0, position() + offset)));
  kick();
  api('POST', '/player/seek', {offset}).then(applyState);
}

function pointerSeconds(e) {
  const r = slider.getBoundingClientRect();
  return Math.min(1, Math.max(0, (e.clientX - r.left) / r.width)) * trackLength();
}

slider.addEventListener('pointerdown', e => {
  if (e.button !== 0 || !seekable()) return;
  slider.focus();
  slider.setPointerCapture(e.pointerId);
  drag = pointerSeconds(e);
  kick();
});
slider.addEventListener('pointermove', e => {
  if (drag == null) return;
  drag = pointerSeconds(e);
  kick();
});
slider.addEventListener('pointerup', e => {
  if (drag == null) return;
  const p = pointerSeconds(e);
  drag = null;
  seekTo(p);
});
slider.addEventListener('pointercancel', () => { drag = null; kick(); });

// ---- Keyboard ----

document.addEventListener('keydown', e => {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target, tag = t.tagName;
  const typing = tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || t.isContentEditable;
  if (e.key === ' ' && !typing && !['BUTTON', 'SUMMARY', 'A'].includes(tag)) {
    e.preventDefault();
    api('POST', '/player/toggle').then(applyState);
  } else if ((e.key === 'ArrowLeft' || e.key === 'ArrowRight') && !typing) {
    e.preventDefault();
    seekBy(e.key === 'ArrowLeft' ? -5 : 5);
  }
});

// ---- Controls ----

let volumeTouched = 0, volumeBusy = false, volumeWanted = null;

// One volume request at a time, always the newest value: a dragged slider fires far faster than the player answers.
async function sendVolume() {
  if (volumeBusy || volumeWanted == null) return;
  volumeBusy = true;
  const volume = volumeWanted;
  volumeWanted = null;
  await api('PUT', '/player/volume', {volume});
  volumeBusy = false;
  sendVolume();
}

$('volume').addEventListener('input', e => {
  volumeTouched = performance.now();
  volumeWanted = Number(e.target.value);
  sendVolume();
});
$('playpause').addEventListener('click', () => {
  const verb = $('playpause').getAttribute('aria-label') === 'Pause' ? 'pause' : 'play';
  api('POST', `/player/${verb}`).then(applyState);
});
$('previous').addEventListener('click', () => api('POST', '/player/previous').then(applyState));
$('next').addEventListener('click', () => api('POST', '/player/next').then(applyState));
$('shuffle').addEventListener('click', () =>
  api('PUT', '/player/shuffle', {shuffle: !state?.shuffle}).then(applyState));
$('loop').addEventListener('click', () => {
  const next = {None: 'Playlist', Playlist: 'Track'}[state?.loop] || 'None';
  api('PUT', '/player/loop', {loop: next}).then(applyState);
});
$('output').addEventListener('change', e => api('PUT', '/player/output', {name: e.target.value}).then(applyState));
$('crossfade').addEventListener('change', e => api('PUT', '/player/crossfade', {seconds: Number(e.target.value)}).then(applyState));
$('art').addEventListener('error', () => { $('art').hidden = true; });

// ---- Queue ----

let queue = {version: null, current: null, tracks: []}, queueLoading = false, queueAgain = false, queueAsked = null;

// The queue at `version`: fetched once, however many states and queue frames name that version meanwhile.
function wantQueue(version) {
  if (version === queue.version || version === queueAsked) return;
  queueAsked = version;
  loadQueue();
}

async function loadQueue() {
  if (queueLoading) { queueAgain = true; return; }
  queueLoading = true;
  const q = await api('GET', '/queue', undefined, true);
  queueLoading = false;
  if (q) renderQueue(q); else queueAsked = null; // asked again at the next mention of a version
  if (queueAgain) { queueAgain = false; loadQueue(); }
}

function renderQueue(q) {
  // Answers can overtake each other: an older list never replaces a newer one.
  if (queue.version != null && q.version < queue.version) return;
  const list = $('queue');
  // Rebuilt whole, so the focused button is found again afterwards (keyboard reordering presses it repeatedly).
  const f = document.activeElement, li = list.contains(f) && f.closest('li');
  const keep = li && {id: li.dataset.id, act: f.dataset.act, index: [...list.children].indexOf(li)};
  queue = q;
  const n = q.tracks.length;
  list.replaceChildren(...q.tracks.map((t, i) => {
    const name = trackName(t);
    const up = iconButton('up', `Move up ${name}`), down = iconButton('down', `Move down ${name}`);
    if (i === 0) up.setAttribute('aria-disabled', 'true');
    if (i === n - 1) down.setAttribute('aria-disabled', 'true');
    return h('li', {'data-id': t.id},
      h('span', {class: 'grip', title: 'Drag to reorder', 'aria-hidden': 'true'}, icon('grip')),
      h('span', {class: 'what'}, h('span', {class: 'name', text: name}), h('span', {class: 'by', text: artistsOf(t) || t.station})),
      h('span', {class: 'len', text: fmt(t.length)}),
      h('span', {class: 'acts'}, iconButton('play', `Play ${name}`), up, down, iconButton('remove', `Remove ${name}`)));
  }));
  $('queue-count').textContent = n ? `(${n})` : '';
  $('queue-empty').hidden = n > 0;
  markCurrent();
  if (keep) {
    const again = list.querySelector(`li[data-id="${keep.id}"]`) || list.children[Math.min(keep.index, n - 1)];
    const target = again && (again.querySelector(`[data-act="${keep.act}"]`) || again.querySelector('button'));
    if (target) target.focus();
  }
}

function markCurrent() {
  const id = state?.track ? state.track.id : queue.current;
  for (const li of $('queue').children) {
    if (Number(li.dataset.id) === id) li.setAttribute('aria-current', 'true');
    else li.removeAttribute('aria-current');
  }
}

async function move(id, after) {
  const q = await api('POST', `/queue/${id}/move`, {after});
  if (q) renderQueue(q);
}

$('queue').addEventListener('click', e => {
  const b = e.target.closest('button[data-act]');
  if (!b) return;
  const id = Number(b.closest('li').dataset.id), ids = queue.tracks.map(t => t.id), i = ids.indexOf(id);
  switch (b.dataset.act) {
    case 'play': api('POST', `/queue/${id}/play`).then(applyState); break;
    case 'remove': api('DELETE', `/queue/${id}`).then(ok => ok && loadQueue()); break;
    case 'up': if (i > 0) move(id, i > 1 ? ids[i - 2] : null); break;
    case 'down': if (i >= 0 && i < ids.length - 1) move(id, ids[i + 1]); break;
  }
});

// Reordering by dragging the grip, with pointer events so that it works with a finger as well as a mouse.
let dnd = null;

function dropMarks(target, before) {
  for (const li of $('queue').children) li.classList.remove('drop-before', 'drop-after');
  if (target) target.classList.add(before ? 'drop-before' : 'drop-after');
}

$('queue').addEventListener('pointerdown', e => {
  const grip = e.target.closest('.grip');
  if (!grip || e.button !== 0) return;
  e.preventDefault();
  grip.setPointerCapture(e.pointerId);
  dnd = {li: grip.closest('li'), target: null, before: false};
  dnd.li.classList.add('dragging');
});
$('queue').addEventListener('pointermove', e => {
  if (!dnd) return;
  const list = $('queue'), box = list.getBoundingClientRect();
  if (e.clientY < box.top + 24) list.scrollTop -= 8;
  else if (e.clientY > box.bottom - 24) list.scrollTop += 8;
  let target = list.lastElementChild, before = false;
  for (const li of list.children) {
    const r = li.getBoundingClientRect();
    if (e.clientY < r.bottom) { target = li; before = e.clientY < r.top + r.height / 2; break; }
  }
  dnd.target = target;
  dnd.before = before;
  dropMarks(target, before);
});
function endDrag(drop) {
  if (!dnd) return;
  const {li, target, before} = dnd;
  dnd = null;
  li.classList.remove('dragging');
  dropMarks(null);
  if (!drop || !target || target === li) return;
  let prev = before ? target.previousElementSibling : target;
  if (prev === li) prev = li.previousElementSibling;
  const after = prev ? Number(prev.dataset.id) : null;
  const now = li.previousElementSibling ? Number(li.previousElementSibling.dataset.id) : null;
  if (after !== now) move(Number(li.dataset.id), after);
}
$('queue').addEventListener('pointerup', () => endDrag(true));
$('queue').addEventListener('pointercancel', () => endDrag(false));

$('add').addEventListener('submit', async e => {
  e.preventDefault();
  const input = $('add-url'), uri = input.value.trim();
  if (!uri) return;
  const r = await api('POST', '/queue', {uris: [uri]});
  if (r) { input.value = ''; refusals(r); }
});

function refusals(r) {
  if (r?.refused?.length) showProblem(r.refused[0].error);
}

// ---- Library and playlists ----

function trackRow(t) {
  const name = t.title || fileName(t.uri);
  return h('li', {'data-uri': t.uri},
    h('span', {class: 'what'}, h('span', {class: 'name', text: name}),
      h('span', {class: 'by', text: [t.artist, t.album].filter(Boolean).join(' · ')})),
    h('span', {class: 'len', text: fmt(t.duration)}),
    h('span', {class: 'acts'}, iconButton('play', `Play ${name}`), iconButton('enqueue', `Enqueue ${name}`)));
}

function enqueue(uris, play, at = play ? 'next' : 'end') {
  return api('POST', '/queue', play ? {uris, at, play: true} : {uris, at}).then(refusals);
}

let searchTimer = 0, searchShown = null;
async function search(q, quiet) {
  q = q.trim();
  if (q === searchShown) return;
  if (!q) { searchShown = q; $('results').replaceChildren(); return; }
  // Typing passes through half-written search expressions: those errors are shown only when the user asks.
  const r = await api('GET', `/library/search?q=${encodeURIComponent(q)}&limit=100`, undefined, quiet);
  if (!r || $('search').value.trim() !== q) return;
  searchShown = q;
  $('results').replaceChildren(...(r.length ? r.map(trackRow) : [h('li', {class: 'muted', text: 'Nothing found.'})]));
}
$('search').addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => search($('search').value, true), 300);
});
$('search-form').addEventListener('submit', e => {
  e.preventDefault();
  searchShown = null;
  search($('search').value, false);
});

async function loadArtists() {
  const r = await api('GET', '/library/artists');
  if (!r) return;
  $('artists').replaceChildren(...r.map(a => h('li', {},
    h('button', {type: 'button', class: 'open', 'data-artist': a.name, 'aria-expanded': 'false',
      text: `${a.name || 'Unknown artist'} `}, h('span', {class: 'muted', text: `(${a.albums})`})))));
}
$('browse').addEventListener('toggle', e => { if (e.target.open && !$('artists').children.length) loadArtists(); });

// A tree of artists, their albums and the albums' tracks, each level fetched when first opened.
async function openNode(b) {
  const li = b.parentElement, open = b.getAttribute('aria-expanded') !== 'true';
  b.setAttribute('aria-expanded', String(open));
  let sub = li.querySelector(':scope > ul');
  if (sub) { sub.hidden = !open; return; }
  if (!open || li.dataset.loading) return;
  li.dataset.loading = 'true';
  const artist = b.dataset.artist;
  const r = await (artist != null ? api('GET', `/library/albums?artist=${encodeURIComponent(artist)}`) : albumTracks(li));
  delete li.dataset.loading;
  if (!r) { b.setAttribute('aria-expanded', 'false'); return; }
  li.append(artist != null
    ? h('ul', {}, ...r.map(a => h('li', {'data-album': a.title, 'data-album-artist': a.albumArtist},
      h('button', {type: 'button', class: 'open', 'aria-expanded': 'false',
        text: `${a.title || 'Unknown album'}${a.year ? ` (${a.year})` : ''}`}),
      iconButton('play-album', `Play album ${a.title}`, 'play'),
      iconButton('enqueue-album', `Enqueue album ${a.title}`, 'enqueue'))))
    : h('ul', {class: 'tracks'}, ...r.map(trackRow)));
}

function albumTracks(li) {
  const q = `album=${encodeURIComponent(li.dataset.album)}&albumArtist=${encodeURIComponent(li.dataset.albumArtist)}`;
  return api('GET', `/library/album-tracks?${q}`);
}

$('library').addEventListener('click', async e => {
  const b = e.target.closest('button');
  if (!b) return;
  if (b.classList.contains('open')) { openNode(b); return; }
  const li = b.closest('li');
  switch (b.dataset.act) {
    case 'play': enqueue([li.dataset.uri], true); break;
    case 'enqueue': enqueue([li.dataset.uri], false); break;
    case 'play-album':
    case 'enqueue-album': {
      const r = await albumTracks(li);
      if (r?.length) enqueue(r.map(t => t.uri), b.dataset.act === 'play-album');
    }
  }
});

async function loadPlaylists() {
  const r = await api('GET', '/playlists');
  if (!r) return;
  $('playlists').replaceChildren(...(r.length ? r.map(p => h('li', {'data-uri': p.uri},
    h('span', {class: 'what'}, h('span', {class: 'name', text: p.name})),
    h('span', {class: 'acts'}, iconButton('play', `Play ${p.name}`), iconButton('enqueue', `Enqueue ${p.name}`))))
    : [h('li', {class: 'muted', text: 'No saved playlists.'})]));
}
$('playlists-box').addEventListener('toggle', e => { if (e.target.open) loadPlaylists(); });
$('playlists').addEventListener('click', e => {
  const b = e.target.closest('button[data-act]');
  if (b) enqueue([b.closest('li').dataset.uri], b.dataset.act === 'play', 'end');
});

// ---- Lyrics ----

let lyricsFor = null, lyricLine = -1;

async function loadLyrics() {
  const id = state?.track?.id ?? null;
  if (id !== lyricsFor) $('lyrics-box').hidden = true;
  lyricsFor = id;
  // No lyrics is an error answer too: never worth an alert.
  const l = id == null ? null : await api('GET', '/lyrics', undefined, true);
  if (lyricsFor !== id) return;
  const lines = l?.id === id && Array.isArray(l.lines) ? l.lines : [];
  $('lyrics').replaceChildren(...lines.map(ln => h('li', {text: ln.text || '\u00a0'})));
  $('lyrics').classList.toggle('synced', !!l?.synced);
  $('lyrics-box').hidden = !lines.length;
  const line = lyricLine;
  lyricLine = -1;
  markLine(line);
}

function markLine(index) {
  if (index === lyricLine) return;
  lyricLine = index;
  const list = $('lyrics');
  for (const li of list.querySelectorAll('[aria-current]')) { li.removeAttribute('aria-current'); li.classList.remove('current'); }
  const li = index >= 0 ? list.children[index] : null;
  if (!li) return;
  li.classList.add('current');
  li.setAttribute('aria-current', 'true');
  // Scrolls the lyrics box alone: scrollIntoView would move the whole page under a user reading something else.
  const still = matchMedia('(prefers-reduced-motion: reduce)').matches;
  list.scrollTo({top: li.offsetTop - list.clientHeight / 2 + li.offsetHeight / 2, behavior: still ? 'auto' : 'smooth'});
}

// ---- LocalSend offers ----

function size(n) {
  if (!n) return '';
  const units = ['B', 'kB', 'MB', 'GB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return ` (${n.toFixed(i && n < 10 ? 1 : 0)} ${units[i]})`;
}

async function loadShares() {
  const s = await api('GET', '/shares', undefined, true);
  if (!s) return;
  const offers = s.offers || [];
  $('offers').hidden = !offers.length;
  $('offer-list').replaceChildren(...offers.map(o => h('div', {class: 'offer', role: 'group',
    'aria-label': `Offer from ${o.sender}`, 'data-id': o.id},
    h('p', {}, h('strong', {text: o.sender}), ` (${o.address}) wants to send:`),
    h('ul', {}, ...(o.files || []).map(f => h('li', {text: f.name + size(f.size)}))),
    h('div', {class: 'row'},
      h('button', {type: 'button', class: 'primary', 'data-act': 'accept', text: 'Accept'}),
      h('button', {type: 'button', 'data-act': 'decline', text: 'Decline'})))));
}

$('offer-list').addEventListener('click', async e => {
  const b = e.target.closest('button[data-act]');
  if (!b) return;
  const box = b.closest('.offer');
  for (const x of box.querySelectorAll('button')) x.disabled = true;
  await api('POST', `/shares/offers/${encodeURIComponent(box.dataset.id)}/${b.dataset.act}`);
  loadShares();
});

// ---- Start ----

$('login').addEventListener('submit', async e => {
  e.preventDefault();
  const ok = await api('POST', '/login', {password: $('password').value});
  $('password').value = '';
  if (ok) {
    $('login').hidden = true;
    setConn('connecting');
    connect();
  }
});

for (const b of document.querySelectorAll('[data-icon]')) b.append(icon(b.dataset.icon));
new ResizeObserver(fitCanvas).observe(slider);
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { readColors(); kick(); });
setConn('connecting');
connect();
