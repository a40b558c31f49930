// Inbound: the mail received for the account's domains (GET /v1/emails/inbound), and one
// message (GET /v1/emails/inbound/{id}) with its authentication results, text, HTML (shown
// safely), headers and attachments.
import { get, qs, enc } from '../api.js';
import { h, add, time, table, pager, field, pre, badge } from '../dom.js';
import { heading, emptyState } from '../page.js';
import { htmlView } from '../htmlview.js';

const LIMIT = 25;

export async function render(main, ctx) {
  if (ctx.id) return renderOne(main, ctx);
  const q = ctx.query;
  const f = { search: q.get('search') || '', page: Math.max(1, Number(q.get('page')) || 1) };
  const form = h('form', { class: 'filters', role: 'search', onsubmit: (ev) => {
    ev.preventDefault();
    ctx.setQuery({ search: new FormData(form).get('search').trim() });
  } }, field('Search', h('input', { name: 'search', type: 'search', value: f.search })),
  h('div', { class: 'field actions' }, h('button', { type: 'submit', class: 'primary' }, 'Search')));
  main.append(heading('Inbound'), form);
  const list = await get(`/v1/emails/inbound${qs({ page: f.page, limit: LIMIT, search: f.search })}`);
  if (!ctx.current()) return;
  if (list.pagination.total === 0) {
    main.append(f.search ? emptyState('No received message matches.')
      : emptyState('No mail received yet. To receive mail, turn Inbound on for a verified domain and publish its MX record.',
        h('a', { href: '#/domains' }, 'Domains →')));
    return;
  }
  main.append(table(['Received', 'From', 'To', 'Subject', 'Attachments'], list.data.map((m) => [
    time(m.received_at, true),
    m.from_name ? `${m.from_name} <${m.from_email}>` : m.from_email,
    m.to_address,
    h('a', { href: `#/inbound/${enc(m.id)}` }, m.subject || '(no subject)'),
    String((m.attachments || []).length),
  ]), { class: 'list' }),
  pager({ page: f.page, total: list.pagination.total, hasMore: list.pagination.has_more, limit: LIMIT },
    (p) => ctx.setQuery({ ...f, page: p })));
}

function authRow(a) {
  if (!a) return h('span', { class: 'muted' }, 'not checked');
  return h('span', null,
    'SPF ', badge(a.spf.result, `auth-${a.spf.result}`), ' · DKIM ',
    a.dkim.length ? a.dkim.map((d) => badge(`${d.result} (${d.domain})`, `auth-${d.result}`)) : badge('none', 'auth-none'),
    ' · DMARC ', badge(a.dmarc.result, `auth-${a.dmarc.result}`));
}

async function renderOne(main, ctx) {
  main.append(h('a', { href: '#/inbound', class: 'back' }, '← Inbound'), heading('Received message'));
  const m = await get(`/v1/emails/inbound/${enc(ctx.id)}`);
  if (!ctx.current()) return;
  main.querySelector('.page-head h1').textContent = m.subject || '(no subject)';
  const dl = h('dl', { class: 'facts' });
  const row = (k, v) => dl.append(h('dt', null, k), h('dd', null, v));
  row('From', m.from_name ? `${m.from_name} <${m.from_email}>` : m.from_email);
  row('To', m.to_address);
  if (m.cc) row('Cc', m.cc.join(', '));
  if (m.reply_to) row('Reply-To', m.reply_to);
  row('Received', time(m.received_at));
  row('Authentication', authRow(m.authentication));
  add(main, h('section', { class: 'card' }, dl),
    m.attachments.length ? h('section', { class: 'card' }, h('h2', null, 'Attachments'), h('ul', null, m.attachments.map((a) =>
      h('li', null, h('a', { href: `/v1/emails/inbound/${enc(m.id)}/attachments/${a.index}`, download: a.filename || `attachment-${a.index}` },
        a.filename || `attachment ${a.index}`), ` (${a.content_type}, ${a.size} bytes)`)))) : null,
    m.html ? h('section', { class: 'card' }, h('h2', null, 'HTML'), htmlView(m.html)) : null,
    m.text ? h('section', { class: 'card' }, h('h2', null, 'Text'), pre(m.text)) : null,
    h('details', { class: 'card' }, h('summary', null, `Headers (${m.headers.length})`),
      table(['Name', 'Value'], m.headers.map((x) => [x.name, x.value]))));
}
