// API keys: the account's keys (GET /v1/api-keys), a form to make one (shown once) and
// revocation. The session's own key is marked.
import { get, post, del, qs, enc } from '../api.js';
import { h, time, badge, table, pager, field, select, confirmButton } from '../dom.js';
import { heading, act } from '../page.js';
import { secretBox } from './webhooks.js';

const LIMIT = 25;
let created = null;  // the key just made: shown once, above the list that now holds it

export async function render(main, ctx) {
  const page = Math.max(1, Number(ctx.query.get('page')) || 1);
  const out = h('div', { 'aria-live': 'polite', class: 'out' });
  main.append(heading('API keys'), out);
  if (created) {
    out.append(secretBox(`Key “${created.name}” created`, created.key, 'Copy it now: it is shown this once, and only its hash is kept.'));
    created = null;
  }
  const [list, domains] = await Promise.all([
    get(`/v1/api-keys${qs({ page, limit: LIMIT })}`),
    get('/v1/domains?limit=100').catch(() => ({ data: [] })),
  ]);
  if (!ctx.current()) return;
  const mine = ctx.session.key && ctx.session.key.id;
  main.append(table(['Name', 'Key', 'Permission', 'Domain', 'Created', 'Revoked', ''], list.data.map((k) => [
    h('span', null, k.name || h('span', { class: 'muted' }, '(made by the CLI)'), k.id === mine ? [' ', badge('this session', 'mine')] : null),
    h('code', null, `${k.prefix}…`),
    h('span', null, badge(k.permission, `perm-${k.permission}`), k.test ? badge('test') : null),
    k.domain || h('span', { class: 'muted' }, 'any'),
    time(k.created_at, true),
    k.revoked_at ? time(k.revoked_at, true) : h('span', { class: 'muted' }, '—'),
    k.revoked_at ? '' : confirmButton('Revoke', `Revoke ${k.name || k.prefix}? Requests with it are refused at once.`, async () => {
      const r = await act(out, () => del(`/v1/api-keys/${enc(k.id)}`));
      if (r !== undefined) ctx.reload(`The key ${k.prefix}… is revoked.`);
    }),
  ]), { class: 'list' }),
  pager({ page, total: list.pagination.total, hasMore: list.pagination.has_more, limit: LIMIT }, (p) => ctx.setQuery({ page: p })));

  const name = h('input', { name: 'name', required: true, maxlength: '100', placeholder: 'shop backend' });
  const perm = select('permission', [['sending', 'sending: send, and read what it sent'], ['full', 'full: everything']], 'sending');
  const dom = select('domain', [['', 'any of the account’s domains'], ...domains.data.map((d) => [d.id, d.domain])], '');
  const test = h('input', { type: 'checkbox', name: 'test' });
  const form = h('form', { class: 'card', id: 'add-key', onsubmit: async (ev) => {
    ev.preventDefault();
    const body = { name: name.value.trim(), permission: perm.value };
    if (dom.value) body.domain = dom.value;
    if (test.checked) body.test = true;
    const k = await act(out, () => post('/v1/api-keys', body), null, form.querySelector('button'));
    if (!k) return;
    created = k;
    await ctx.reload();
    document.querySelector('#main .secret button')?.focus();
  } },
  h('h2', null, 'Create a key'), field('Name', name), field('Permission', perm),
  field('Only from domain', dom, 'A key tied to a domain sends only from it.'),
  h('label', { class: 'switch' }, test, h('span', null, 'Test mode'), h('small', { class: 'hint' }, 'Mail sent with a test key is recorded but never delivered.')),
  h('button', { type: 'submit', class: 'primary' }, 'Create key'));
  main.append(form);
}
