// One webhook: edit its URL, events and state (PATCH), delete it, rotate its secret, and its
// deliveries with the endpoint's answers, each replayable (POST …/replay).
import { get, post, patch, del, qs, enc } from '../api.js';
import { h, clear, time, badge, table, pager, field, confirmButton, message } from '../dom.js';
import { heading, act, errorBox } from '../page.js';
import { eventBoxes, secretBox } from './webhooks.js';

const LIMIT = 20;

export async function render(main, ctx) {
  main.append(h('a', { href: '#/webhooks', class: 'back' }, '← Webhooks'), heading('Webhook'));
  const w = await get(`/v1/webhooks/${enc(ctx.id)}`);
  if (!ctx.current()) return;
  const out = h('div', { 'aria-live': 'polite', class: 'out' });
  const url = h('input', { name: 'url', type: 'url', required: true, value: w.url });
  const active = h('input', { type: 'checkbox', name: 'status', role: 'switch', checked: w.status });
  const form = h('form', { class: 'card', id: 'edit-webhook', onsubmit: async (ev) => {
    ev.preventDefault();
    const events = [...form.querySelectorAll('input[name=events]:checked')].map((i) => i.value);
    if (!events.length) { clear(out, message('error', 'Choose at least one event.')); return; }
    await act(out, () => patch(`/v1/webhooks/${enc(w.id)}`, { url: url.value.trim(), events, status: active.checked }),
      'Saved.', form.querySelector('button[type=submit]'));
  } },
  h('h2', null, 'Settings'),
  field('Endpoint URL', url),
  h('label', { class: 'switch' }, active, h('span', null, 'Active'), h('small', { class: 'hint' }, 'A disabled webhook gets no calls.')),
  eventBoxes(w.events),
  h('button', { type: 'submit', class: 'primary' }, 'Save'));

  const rotate = h('button', { type: 'button', id: 'rotate-secret', onclick: async () => {
    const r = await act(out, () => post(`/v1/webhooks/${enc(w.id)}/rotate-secret`), null, rotate);
    if (r) {
      clear(out, secretBox('New signing secret', r.secret,
        h('span', null, 'Shown this once. Until ', time(r.previous_secret_expires_at), ' each call also carries a signature made with the old secret.')));
    }
  } }, 'Rotate the signing secret');
  const since = h('input', { type: 'datetime-local', name: 'since', required: true });
  const replayForm = h('form', { class: 'inline-form', onsubmit: async (ev) => {
    ev.preventDefault();
    const iso = new Date(since.value).toISOString();
    const r = await act(out, () => post(`/v1/webhooks/${enc(w.id)}/replay`, { failed_since: iso }),
      (x) => `${x.replayed} given-up deliver${x.replayed === 1 ? 'y is' : 'ies are'} pending again.`, replayForm.querySelector('button'));
    if (r) loadDeliveries(1);
  } }, field('Replay every failed delivery since', since), h('button', { type: 'submit' }, 'Replay failed'));

  const deliveries = h('section', { class: 'card', 'aria-labelledby': 'dl-h' });
  main.querySelector('.page-head h1').textContent = w.url;
  main.append(out, form, deliveries,
    h('section', { class: 'card' }, h('h2', null, 'Secret and replay'), rotate, replayForm),
    h('section', { class: 'card danger-zone' }, h('h2', null, 'Delete'),
      confirmButton('Delete', 'Delete this webhook? Its pending calls are dropped.', async () => {
        const r = await act(out, () => del(`/v1/webhooks/${enc(w.id)}`));
        if (r !== undefined) location.hash = '#/webhooks';
      })));

  let cur = 1;
  async function loadDeliveries(page) {
    cur = page;
    let list;
    try {
      list = await get(`/v1/webhooks/${enc(w.id)}/deliveries${qs({ page, limit: LIMIT })}`);
    } catch (e) {
      clear(deliveries, h('h2', { id: 'dl-h' }, 'Deliveries'), errorBox(e));
      return;
    }
    if (!ctx.current()) return;
    const head = h('h2', { id: 'dl-h' }, 'Deliveries ', h('button', { type: 'button', class: 'small-button', onclick: () => loadDeliveries(page) }, 'Refresh'));
    if (list.pagination.total === 0) {
      clear(deliveries, head, h('p', { class: 'muted' }, 'No call yet: each event this webhook listens to is delivered here within moments.'));
      return;
    }
    clear(deliveries, head, table(['Time', 'Event', 'Attempt', 'Answer', 'Took', ''], list.data.map((d) => [
      time(d.created_at, true),
      h('span', null, d.event, h('div', { class: 'small muted' }, d.event_id)),
      String(d.attempt),
      d.status_code !== null && d.status_code !== undefined
        ? badge(`HTTP ${d.status_code}`, d.status_code >= 200 && d.status_code < 300 ? 'ok' : 'bad')
        : h('span', { class: 'warn' }, d.error || 'no answer'),
      `${d.duration_ms} ms`,
      h('button', { type: 'button', onclick: async (ev) => {
        const r = await act(out, () => post(`/v1/webhooks/${enc(w.id)}/replay`, { event_id: d.event_id }),
          `The call of ${d.event_id} is made again.`, ev.target);
        if (r) setTimeout(() => loadDeliveries(1), 1500);
      } }, 'Replay'),
    ]), { class: 'deliveries' }),
    pager({ page, total: list.pagination.total, hasMore: list.pagination.has_more, limit: LIMIT }, loadDeliveries));
  }
  await loadDeliveries(1);
  ctx.every(5000, () => { if (!deliveries.contains(document.activeElement)) loadDeliveries(cur); });
}
