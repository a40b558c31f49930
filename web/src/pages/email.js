// One email: its fields, each recipient's status, attempts, last reply, bounce classification
// and TLS (GET /v1/emails/{id}); its events as a timeline (…/events); its HTML in a sandboxed
// iframe (…/preview); the raw message to download (…/raw). While the email is not final the
// page reloads its data every 3 s, so a delivery shows up without a click.
import { get, post, enc, ApiError } from '../api.js';
import { h, clear, time, badge, table, pre, message } from '../dom.js';
import { heading, errorBox, act } from '../page.js';

const OPEN = new Set(['QUEUED', 'SENT', 'SCHEDULED']);

export async function render(main, ctx) {
  const id = ctx.id;
  const back = h('a', { href: '#/emails', class: 'back' }, '← Emails');
  main.append(back, heading('Email'));
  const body = h('div');
  main.append(body);
  let email = await get(`/v1/emails/${enc(id)}`);
  if (!ctx.current()) return;
  const events = h('section', { class: 'card', 'aria-labelledby': 'ev-h' }, h('h2', { id: 'ev-h' }, 'Timeline'));
  const summary = h('div');
  const recipients = h('section', { class: 'card', 'aria-labelledby': 'rc-h' });
  const actions = h('div', { class: 'actions' });
  const out = h('div', { 'aria-live': 'polite' });
  const preview = previewSection(id);
  body.append(summary, actions, out, recipients, events, preview);

  function fill() {
    clear(summary, details(email));
    clear(recipients, h('h2', { id: 'rc-h' }, `Recipients (${email.recipients.length})`), recipientTable(email.recipients));
    clear(actions,
      h('a', { class: 'button', href: `/v1/emails/${enc(id)}/raw`, download: `${id}.eml` }, 'Download the raw message (.eml)'),
      email.status === 'SCHEDULED' || email.status === 'QUEUED'
        ? h('button', { type: 'button', class: 'danger', onclick: async (ev) => {
          const r = await act(out, () => post(`/v1/emails/${enc(id)}/cancel`), 'Canceled: the recipients not yet attempted will not be.', ev.target);
          if (r) refresh();
        } }, 'Cancel sending')
        : null);
  }
  async function refresh() {
    try {
      email = await get(`/v1/emails/${enc(id)}`);
    } catch (e) {
      if (ctx.current()) clear(out, errorBox(e, 'This email'));
      return;
    }
    if (!ctx.current()) return;
    fill();
    await loadEvents(events, id);
  }
  fill();
  await loadEvents(events, id);
  if (OPEN.has(email.status)) {
    ctx.every(3000, () => { if (OPEN.has(email.status)) refresh(); });
  }
}

function details(e) {
  const dl = h('dl', { class: 'facts' });
  const row = (k, v) => dl.append(h('dt', null, k), h('dd', null, v));
  row('Status', badge(e.status));
  row('Subject', e.subject || h('span', { class: 'muted' }, '(no subject)'));
  row('From', e.from);
  row('To', e.to);
  row('Id', h('code', null, e.id));
  row('Created', time(e.created_at));
  if (e.scheduled_at) row('Scheduled for', time(e.scheduled_at));
  row('Sent', time(e.sent_at));
  row('Delivered', time(e.delivered_at));
  if (e.failed_at) row('Failed', time(e.failed_at));
  if (e.opened_at) row('Opened', time(e.opened_at));
  if (e.clicked_at) row('Clicked', time(e.clicked_at));
  if (e.tags && e.tags.length) row('Tags', e.tags.map((t) => h('span', { class: 'tag' }, `${t.name}:${t.value}`)));
  if (e.metadata) row('Metadata', pre(JSON.stringify(e.metadata, null, 2)));
  if (e.test) row('Test mode', 'yes: sent with a test key, never delivered');
  return dl;
}

function bounceText(b) {
  if (!b) return h('span', { class: 'muted' }, '—');
  return h('span', null, badge(b.type, `bounce-${b.type}`), b.code ? ` ${b.code}` : '',
    h('div', { class: 'small' }, b.message));
}

function tlsText(t) {
  if (!t) return h('span', { class: 'muted' }, '—');
  return h('span', null, `${t.policy}${t.version ? `, ${t.version}` : ', not encrypted'}${t.verified ? ', verified' : ''}`,
    t.failure ? h('div', { class: 'small warn' }, t.failure) : null);
}

function recipientTable(list) {
  return table(['Recipient', 'Status', 'Attempts', 'Next attempt', 'Last reply', 'Bounce', 'TLS'], list.map((r) => [
    h('span', null, r.email, h('span', { class: 'muted small' }, ` (${r.type})`)),
    h('span', null, badge(r.status), r.held ? badge('held') : null),
    String(r.attempts),
    r.next_attempt_at ? time(r.next_attempt_at, true) : h('span', { class: 'muted' }, '—'),
    r.last_response ? pre(r.last_response, 'reply') : h('span', { class: 'muted' }, 'no attempt yet'),
    bounceText(r.bounce),
    tlsText(r.tls),
  ]), { class: 'recipients' });
}

const EVENT_WORDS = {
  'email.sent': 'A recipient’s server accepted the message',
  'email.delivered': 'Delivered to every recipient',
  'email.delivery_delayed': 'Delivery delayed: waiting for a retry',
  'email.bounced': 'Bounced',
  'email.failed': 'Failed',
  'email.blocked': 'Blocked: a recipient is on the suppression list',
  'email.complained': 'A recipient complained',
  'email.opened': 'Opened',
  'email.clicked': 'A link was clicked',
  'email.canceled': 'Canceled',
};

async function loadEvents(section, id) {
  const head = section.querySelector('h2');
  let data;
  try {
    data = await get(`/v1/emails/${enc(id)}/events`);
  } catch (e) {
    clear(section, head, e instanceof ApiError && e.status === 404
      ? message('notice', 'This server does not keep an event timeline for emails yet (GET /v1/emails/{id}/events answered 404).')
      : errorBox(e));
    return;
  }
  const items = data.data || [];
  if (!items.length) {
    clear(section, head, h('p', { class: 'muted' }, 'No event yet: the email is waiting for its first delivery attempt.'));
    return;
  }
  clear(section, head, h('ol', { class: 'timeline' }, items.map((ev) => {
    const d = ev.data || {};
    return h('li', { class: `ev ev-${ev.type.replace(/\W+/g, '-')}` },
      h('div', { class: 'ev-head' }, time(ev.created_at), ' ', h('strong', null, ev.type),
        h('span', { class: 'muted' }, ` — ${EVENT_WORDS[ev.type] || ''}`)),
      Array.isArray(d.recipients) && d.recipients.length ? h('ul', { class: 'ev-recipients' }, d.recipients.map((r) =>
        h('li', null, r.email, ' ', badge(r.status), r.attempts !== undefined ? ` after ${r.attempts} attempt${r.attempts === 1 ? '' : 's'}` : '',
          (r.response || r.last_response) ? pre(r.response || r.last_response, 'reply') : null,
          r.bounce ? h('div', null, 'Bounce: ', bounceText(r.bounce)) : null))) : null,
      d.url ? h('div', null, 'Link: ', h('code', null, d.url)) : null,
      d.ip ? h('div', { class: 'small muted' }, `${d.ip} · ${d.user_agent || ''}`) : null);
  })));
}

function previewSection(id) {
  const sec = h('section', { class: 'card', 'aria-labelledby': 'pv-h' }, h('h2', { id: 'pv-h' }, 'HTML'));
  const src = `/v1/emails/${enc(id)}/preview`;
  // Asked first, so that a server without the preview (or an email without HTML) says so in
  // words instead of showing a JSON error in the frame.
  fetch(src, { credentials: 'same-origin', method: 'GET', cache: 'no-store' }).then((r) => {
    if (r.ok) {
      sec.append(h('iframe', { sandbox: '', src, title: 'The email’s HTML (sandboxed: no scripts)', class: 'preview', referrerpolicy: 'no-referrer' }));
    } else {
      return r.json().catch(() => ({})).then((b) => sec.append(message('notice', r.status === 404
        ? `No HTML preview: ${b.message || 'this email has none, or the server does not offer previews yet'}.`
        : `The preview could not be loaded: ${b.message || r.status}.`)));
    }
    return null;
  }).catch((e) => sec.append(message('error', `The preview could not be loaded: ${e.message}`)));
  return sec;
}
