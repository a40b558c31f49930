// Emails: the account's sent emails (GET /v1/email) with search, status, tag and date filters
// kept in the URL (#/emails?search=…&status=…&page=2), newest first, 25 a page.
import { get, qs } from '../api.js';
import { h, time, badge, table, pager, field, select, localDayToIso, isDay } from '../dom.js';
import { heading, emptyState } from '../page.js';

export const STATUSES = ['QUEUED', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED', 'COMPLAINED', 'BLOCKED', 'SCHEDULED', 'CANCELED'];
const LIMIT = 25;

export async function render(main, ctx) {
  const q = ctx.query;
  const f = {
    search: q.get('search') || '', status: q.get('status') || '', tag: q.get('tag') || '',
    // A day that is not one (a URL edited by hand) is no filter.
    from: isDay(q.get('from')) ? q.get('from') : '', to: isDay(q.get('to')) ? q.get('to') : '', page: Math.max(1, Number(q.get('page')) || 1),
  };
  const form = h('form', { class: 'filters', role: 'search', onsubmit: (ev) => {
    ev.preventDefault();
    const d = new FormData(form);
    ctx.setQuery({ search: d.get('search').trim(), status: d.get('status'), tag: d.get('tag').trim(),
      from: d.get('from'), to: d.get('to') });
  } },
  field('Search', h('input', { name: 'search', type: 'search', value: f.search, placeholder: 'subject or address' })),
  field('Status', select('status', [['', 'Any status'], ...STATUSES.map((s) => [s, s])], f.status)),
  field('Tag', h('input', { name: 'tag', value: f.tag, placeholder: 'name:value', pattern: '[A-Za-z0-9_\\-]+:[A-Za-z0-9_\\-]+' })),
  field('From day', h('input', { name: 'from', type: 'date', value: f.from })),
  field('To day', h('input', { name: 'to', type: 'date', value: f.to })),
  h('div', { class: 'field actions' }, h('button', { type: 'submit', class: 'primary' }, 'Filter'),
    h('a', { href: '#/emails', class: 'button' }, 'Clear')));
  main.append(heading('Emails'), form);

  const data = await get(`/v1/email${qs({
    page: f.page, limit: LIMIT, search: f.search, status: f.status, tag: f.tag,
    start_date: localDayToIso(f.from, false), end_date: localDayToIso(f.to, true),
  })}`);
  if (!ctx.current()) return;
  const filtered = f.search || f.status || f.tag || f.from || f.to;
  if (data.total === 0) {
    main.append(filtered
      ? emptyState('No email matches these filters.', h('a', { href: '#/emails' }, 'Show every email'))
      : emptyState('No email sent yet. Send one with POST /v1/emails (or SMTP submission) from a verified domain; it shows here at once.',
        h('a', { href: '#/domains' }, 'Set up a sending domain')));
    return;
  }
  main.append(table(['Created', 'To', 'Subject', 'Status', 'Tags'], data.data.map((e) => [
    time(e.created_at, true),
    h('a', { href: `#/emails/${encodeURIComponent(e.id)}` }, e.to || '(no recipient)'),
    e.subject || h('span', { class: 'muted' }, '(no subject)'),
    badge(e.status),
    (e.tags || []).map((t) => h('span', { class: 'tag' }, `${t.name}:${t.value}`)),
  ]), { class: 'list' }),
  pager({ page: data.page, total: data.total, hasMore: data.hasMore, limit: data.limit },
    (p) => ctx.setQuery({ ...f, page: p })));
}
