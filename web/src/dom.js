// Small DOM helpers: h() builds elements without innerHTML (text is always text), and the
// shared pieces of every page: times in the browser's zone, badges, tables, pagers, forms.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'value') el.value = v;
      else if (k === 'checked') el.checked = !!v;
      else if (k === 'style') throw new Error('no style attributes (CSP): use a class');
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

// Appends children, skipping null, undefined and false (Element.append would write "null").
export function add(el, ...children) {
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const timeFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const shortFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

// A <time> in the browser's time zone, with the ISO instant as its datetime and title.
export function time(iso, short = false) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return h('span', null, iso);
  return h('time', { datetime: iso, title: iso }, (short ? shortFmt : timeFmt).format(d));
}

export function badge(text, kind) {
  const k = kind || String(text).toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return h('span', { class: `badge badge-${k}` }, text);
}

export function table(headers, rows, opts = {}) {
  return h('div', { class: 'table-wrap' },
    h('table', { class: opts.class || null },
      opts.caption ? h('caption', null, opts.caption) : null,
      h('thead', null, h('tr', null, headers.map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', null, rows.map((cells) => h('tr', null,
        cells.map((c, i) => h('td', { 'data-label': headers[i] }, c)))))));
}

// Page n of a list: "Page 2 of 5 (87)" with Previous / Next buttons.
export function pager({ page, total, hasMore, limit }, go) {
  const pages = Math.max(1, Math.ceil((total || 0) / (limit || 1)));
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('button', { type: 'button', disabled: page <= 1, onclick: () => go(page - 1) }, '← Previous'),
    h('span', null, `Page ${page} of ${pages} · ${total} in all`),
    h('button', { type: 'button', disabled: !hasMore, onclick: () => go(page + 1) }, 'Next →'));
}

export function field(label, input, hint) {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input,
    hint ? h('small', { class: 'hint' }, hint) : null);
}

export function select(name, options, value) {
  return h('select', { name },
    options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)));
}

// A message area: error (role=alert), notice or success.
export function message(kind, text) {
  return h('p', { class: `msg msg-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

// A button that asks again before acting: "Delete" → "Really delete? [Yes] [Cancel]" (no
// window.confirm, which neither tests nor keyboards like).
export function confirmButton(label, question, action, cls = 'danger') {
  const wrap = h('span', { class: 'confirm' });
  const first = h('button', { type: 'button', class: cls, onclick: () => {
    const yes = h('button', { type: 'button', class: cls, onclick: async () => {
      yes.disabled = true;
      try { await action(); } finally { reset(); }
    } }, `Yes, ${label.toLowerCase()}`);
    const no = h('button', { type: 'button', onclick: () => reset(first) }, 'Cancel');
    clear(wrap, h('span', { class: 'question' }, question), ' ', yes, ' ', no);
    yes.focus();
  } }, label);
  function reset(focus) {
    if (!wrap.isConnected) return;
    clear(wrap, first);
    if (focus) first.focus();
  }
  wrap.appendChild(first);
  return wrap;
}

// Copies text with navigator.clipboard; says so on the button for a moment.
export function copyButton(text, label = 'Copy') {
  const b = h('button', { type: 'button', class: 'copy', 'aria-label': `${label}: ${text}`, onclick: async () => {
    try {
      await navigator.clipboard.writeText(text);
      b.textContent = 'Copied';
    } catch {
      b.textContent = 'Copy failed: select the text';
    }
    setTimeout(() => { b.textContent = label; }, 1500);
  } }, label);
  return b;
}

export function formData(form) {
  const o = {};
  for (const [k, v] of new FormData(form).entries()) o[k] = typeof v === 'string' ? v.trim() : v;
  return o;
}

// A local date (YYYY-MM-DD from <input type=date>) as the ISO instant of its start or end in
// the browser's zone.
// A day YYYY-MM-DD of the browser's time zone, as the instant it starts (or ends, `end`);
// '' for none, and for anything that is not such a day (a URL edited by hand).
export function isDay(day) {
  if (!/^\d{4}-\d\d-\d\d$/.test(day || '')) return false;
  const [y, m, d] = day.split('-').map(Number);
  const t = new Date(y, m - 1, d);
  return t.getFullYear() === y && t.getMonth() === m - 1 && t.getDate() === d;
}

export function localDayToIso(day, end) {
  if (!isDay(day)) return '';
  const [y, m, d] = day.split('-').map(Number);
  const t = end ? new Date(y, m - 1, d, 23, 59, 59, 999) : new Date(y, m - 1, d);
  return t.toISOString();
}

export function pre(text, cls) {
  return h('pre', { class: cls || null }, text);
}

export function num(n) {
  return new Intl.NumberFormat().format(n || 0);
}
