// Webhooks: the account's endpoints (GET /v1/webhooks) and a form to create one; the new
// webhook's signing secret is shown once.
import { get, post, qs, enc } from '../api.js';
import { h, clear, time, badge, table, pager, field, copyButton, message } from '../dom.js';
import { heading, emptyState, act } from '../page.js';

export const EVENTS = ['email.sent', 'email.delivered', 'email.delivery_delayed', 'email.bounced', 'email.failed',
  'email.blocked', 'email.complained', 'email.opened', 'email.clicked', 'email.canceled', 'inbound.received',
  'domain.verified', 'domain.failed', 'suppression.added', 'suppression.removed'];
const LIMIT = 25;

export function eventBoxes(selected) {
  return h('fieldset', { class: 'events' }, h('legend', null, 'Events'),
    h('div', { class: 'checks' }, EVENTS.map((e) => h('label', null,
      h('input', { type: 'checkbox', name: 'events', value: e, checked: selected.includes(e) }), ` ${e}`))));
}

export function secretBox(title, secret, note) {
  return h('div', { class: 'secret card', role: 'status' }, h('h2', null, title),
    h('p', null, note),
    h('p', null, h('code', { class: 'secret-value' }, secret), ' ', copyButton(secret)));
}

export async function render(main, ctx) {
  const page = Math.max(1, Number(ctx.query.get('page')) || 1);
  const out = h('div', { 'aria-live': 'polite', class: 'out' });
  const url = h('input', { name: 'url', type: 'url', required: true, placeholder: 'https://hooks.example.com/posthorn' });
  const form = h('form', { class: 'card', id: 'add-webhook', onsubmit: async (ev) => {
    ev.preventDefault();
    const events = [...form.querySelectorAll('input[name=events]:checked')].map((i) => i.value);
    if (!events.length) { clear(out, message('error', 'Choose at least one event.')); return; }
    const w = await act(out, () => post('/v1/webhooks', { url: url.value.trim(), events }), null, form.querySelector('button[type=submit]'));
    if (!w) return;
    clear(out, secretBox('Webhook created', w.secret,
      'Its signing secret is shown this once: keep it to check the webhook-signature header of each call (Standard Webhooks).'),
    h('p', null, h('a', { href: `#/webhooks/${enc(w.id)}` }, 'Open the webhook and its deliveries →')));
    form.reset();
    refreshList();
  } },
  h('h2', null, 'Create a webhook'),
  field('Endpoint URL', url, 'posthorn POSTs each event there, signed, and retries until it answers 2xx.'),
  eventBoxes(['email.delivered', 'email.bounced', 'email.failed', 'email.complained']),
  h('button', { type: 'submit', class: 'primary' }, 'Create webhook'));
  const listBox = h('div');
  main.append(heading('Webhooks'), listBox, form, out);

  async function refreshList() {
    const list = await get(`/v1/webhooks${qs({ page, limit: LIMIT })}`);
    if (!ctx.current()) return;
    if (list.pagination.total === 0) {
      clear(listBox, emptyState('No webhook yet. Create one below to have posthorn call your server when an email is delivered, bounces, or anything else happens.'));
      return;
    }
    clear(listBox, table(['Endpoint', 'Active', 'Events', 'Created'], list.data.map((w) => [
      h('a', { href: `#/webhooks/${enc(w.id)}` }, w.url),
      w.status ? badge('active') : badge('disabled'),
      h('span', { class: 'small' }, w.events.join(', ')),
      time(w.created_at, true),
    ]), { class: 'list' }),
    pager({ page, total: list.pagination.total, hasMore: list.pagination.has_more, limit: LIMIT },
      (p) => ctx.setQuery({ page: p })));
  }
  await refreshList();
}
