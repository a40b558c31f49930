// Logs: the account's API request log (GET /v1/logs) with status and method filters.
import { get, qs } from '../api.js';
import { h, time, badge, table, pager, field, select } from '../dom.js';
import { heading, emptyState } from '../page.js';

const LIMIT = 50;

export async function render(main, ctx) {
  const q = ctx.query;
  const f = { status: q.get('status') || '', method: q.get('method') || '', page: Math.max(1, Number(q.get('page')) || 1) };
  const form = h('form', { class: 'filters', onsubmit: (ev) => {
    ev.preventDefault();
    const d = new FormData(form);
    ctx.setQuery({ status: d.get('status').trim(), method: d.get('method') });
  } },
  field('Status', h('input', { name: 'status', type: 'number', min: '100', max: '599', value: f.status, placeholder: 'e.g. 404' })),
  field('Method', select('method', [['', 'Any method'], ...['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => [m, m])], f.method)),
  h('div', { class: 'field actions' }, h('button', { type: 'submit', class: 'primary' }, 'Filter'),
    h('a', { href: '#/logs', class: 'button' }, 'Clear')));
  main.append(heading('Logs'), h('p', { class: 'hint' }, 'Every API request made with your keys, by your programs (API) or here in the dashboard, newest first (kept 90 days by default).'), form);
  const list = await get(`/v1/logs${qs({ page: f.page, limit: LIMIT, status: f.status, method: f.method })}`);
  if (!ctx.current()) return;
  if (list.pagination.total === 0) {
    main.append(emptyState(f.status || f.method ? 'No request matches these filters.' : 'No API request logged yet.'));
    return;
  }
  main.append(table(['Time', 'Method', 'URL', 'Status', 'Took', 'Client'], list.data.map((l) => [
    time(l.created_at, true), l.method, h('code', { class: 'url' }, l.url),
    badge(String(l.status), l.status < 400 ? 'ok' : 'bad'), `${l.duration_ms} ms`,
    h('span', { class: 'small' }, l.ip, ' ', badge(l.source === 'dashboard' ? 'dashboard' : 'API', 'muted'),
      h('div', { class: 'muted' }, l.user_agent)),
  ]), { class: 'list' }),
  pager({ page: f.page, total: list.pagination.total, hasMore: list.pagination.has_more, limit: LIMIT },
    (p) => ctx.setQuery({ ...f, page: p })));
}
