// Domains: the account's sending domains (GET /v1/domains) and a form to add one.
import { get, post, qs } from '../api.js';
import { h, clear, time, badge, table, pager, field } from '../dom.js';
import { heading, emptyState, act } from '../page.js';

const LIMIT = 25;

export async function render(main, ctx) {
  const page = Math.max(1, Number(ctx.query.get('page')) || 1);
  const out = h('div', { 'aria-live': 'polite' });
  const input = h('input', { name: 'domain', required: true, placeholder: 'mail.example.com', autocomplete: 'off' });
  const add = h('form', { class: 'inline-form card', id: 'add-domain', onsubmit: async (ev) => {
    ev.preventDefault();
    const d = await act(out, () => post('/v1/domains', { domain: input.value.trim() }), null, add.querySelector('button'));
    if (d) location.hash = `#/domains/${encodeURIComponent(d.id)}`;
  } },
  h('h2', null, 'Add a domain'),
  field('Domain name', input, 'The domain you send from, e.g. mail.example.com. You then publish its DNS records and verify it.'),
  h('button', { type: 'submit', class: 'primary' }, 'Add domain'), out);
  main.append(heading('Domains'));
  const list = await get(`/v1/domains${qs({ page, limit: LIMIT })}`);
  if (!ctx.current()) return;
  if (list.pagination.total === 0) {
    main.append(emptyState('You have no domain yet. Add the domain you send from below: posthorn then shows the DNS records (DKIM, SPF, DMARC) to publish at your DNS provider, and a Verify button to check them.'));
    main.append(add);
    input.focus();
    return;
  }
  main.append(table(['Domain', 'Status', 'Sending', 'Inbound', 'Created', 'Last checked'], list.data.map((d) => [
    h('a', { href: `#/domains/${encodeURIComponent(d.id)}` }, d.domain),
    badge(d.status),
    d.config.sending ? 'on' : 'off',
    d.config.inbound ? 'on' : 'off',
    time(d.created_at, true),
    time(d.last_checked_at, true),
  ]), { class: 'list' }),
  pager({ page, total: list.pagination.total, hasMore: list.pagination.has_more, limit: LIMIT },
    (p) => ctx.setQuery({ page: p })),
  add);
  clear(out);
}
