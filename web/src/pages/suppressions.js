// Suppressions: the addresses the account never sends to. Search, filter by reason, add,
// remove (GET/POST /v1/suppressions, DELETE /v1/suppressions/{email}).
import { get, post, del, qs, enc } from '../api.js';
import { h, clear, time, badge, table, pager, field, select, confirmButton } from '../dom.js';
import { heading, emptyState, act } from '../page.js';

const REASONS = ['hard_bounce', 'complaint', 'manual', 'unsubscribe'];
const LIMIT = 25;

export async function render(main, ctx) {
  const q = ctx.query;
  const f = { search: q.get('search') || '', reason: q.get('reason') || '', page: Math.max(1, Number(q.get('page')) || 1) };
  const out = h('div', { 'aria-live': 'polite', class: 'out' });
  const filters = h('form', { class: 'filters', role: 'search', onsubmit: (ev) => {
    ev.preventDefault();
    const d = new FormData(filters);
    ctx.setQuery({ search: d.get('search').trim(), reason: d.get('reason') });
  } },
  field('Search', h('input', { name: 'search', type: 'search', value: f.search, placeholder: 'part of an address' })),
  field('Reason', select('reason', [['', 'Any reason'], ...REASONS.map((r) => [r, r.replace('_', ' ')])], f.reason)),
  h('div', { class: 'field actions' }, h('button', { type: 'submit', class: 'primary' }, 'Search'),
    h('a', { href: '#/suppressions', class: 'button' }, 'Clear')));
  const email = h('input', { name: 'email', type: 'email', required: true, placeholder: 'someone@example.net' });
  const reason = select('reason', REASONS.map((r) => [r, r.replace('_', ' ')]), 'manual');
  const add = h('form', { class: 'inline-form card', id: 'add-suppression', onsubmit: async (ev) => {
    ev.preventDefault();
    const r = await act(out, () => post('/v1/suppressions', { email: email.value.trim(), reason: reason.value }),
      null, add.querySelector('button'));
    if (r) ctx.reload(`${r.email} is suppressed: posthorn will not send to it.`);
  } }, h('h2', null, 'Add an address'), field('Address', email), field('Reason', reason),
  h('button', { type: 'submit', class: 'primary' }, 'Suppress'));
  main.append(heading('Suppressions'), h('p', { class: 'hint' },
    'Addresses here are never sent to: an email to one is BLOCKED. Hard bounces and complaints add them; remove one to send to it again.'),
  filters, out);
  const list = await get(`/v1/suppressions${qs({ page: f.page, limit: LIMIT, search: f.search, reason: f.reason })}`);
  if (!ctx.current()) return;
  if (list.pagination.total === 0) {
    main.append(f.search || f.reason
      ? emptyState('No suppressed address matches.', h('a', { href: '#/suppressions' }, 'Show them all'))
      : emptyState('The suppression list is empty: every address may be sent to. Hard bounces and complaints will be added here by themselves.'));
  } else {
    main.append(table(['Address', 'Reason', 'Caused by', 'Added', ''], list.data.map((s) => [
      s.email,
      badge(s.reason.replace('_', ' '), `reason-${s.reason}`),
      s.email_id ? h('a', { href: `#/emails/${enc(s.email_id)}` }, s.email_id) : h('span', { class: 'muted' }, 'added by hand'),
      time(s.created_at, true),
      confirmButton('Remove', `Send to ${s.email} again?`, async () => {
        const r = await act(out, () => del(`/v1/suppressions/${enc(s.email)}`));
        if (r !== undefined) ctx.reload(`${s.email} was removed from the list: it may be sent to again.`);
      }),
    ]), { class: 'list' }),
    pager({ page: f.page, total: list.pagination.total, hasMore: list.pagination.has_more, limit: LIMIT },
      (p) => ctx.setQuery({ ...f, page: p })));
  }
  main.append(add);
  clear(out);
}
