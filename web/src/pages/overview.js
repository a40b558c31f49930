// Overview: the account's numbers over the last 24 hours, 7 days or 30 days from
// GET /v1/stats (totals, delivery and bounce rates, a chart per bucket drawn by uPlot), and
// the mail still queued, by domain and state, from GET /v1/queue.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { get, qs, ApiError } from '../api.js';
import { h, time, table, num, message } from '../dom.js';
import { heading, errorBox } from '../page.js';

const RANGES = { '24h': [24 * 3600e3, 'hour'], '7d': [7 * 86400e3, 'hour'], '30d': [30 * 86400e3, 'day'] };
const SERIES = [
  ['accepted', 'Accepted', '#4a6fa5'], ['delivered', 'Delivered', '#2e7d32'], ['bounced', 'Bounced', '#c62828'],
  ['failed', 'Failed', '#8e5b00'], ['complained', 'Complained', '#6a1b9a'], ['opened', 'Opened', '#00838f'],
];

function pct(a, b) {
  if (!b) return '—';
  return `${((100 * a) / b).toFixed(1)}\u00a0%`;
}

export async function render(main, ctx) {
  const range = RANGES[ctx.query.get('range')] ? ctx.query.get('range') : '24h';
  const picker = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Period' },
    Object.keys(RANGES).map((r) => h('a', { class: 'button', href: `#/?range=${r}`, 'aria-current': r === range ? 'true' : null },
      { '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' }[r])));
  const stats = h('section', { class: 'stats', 'aria-labelledby': 'st-h' }, h('h2', { id: 'st-h', class: 'sr-only' }, 'Statistics'));
  const queue = h('section', { class: 'card', 'aria-labelledby': 'q-h' }, h('h2', { id: 'q-h' }, 'Queue'));
  main.append(heading('Overview', picker), stats, queue);
  await Promise.all([loadStats(stats, range, ctx), loadQueue(queue)]);
}

async function loadStats(sec, range, ctx) {
  const [span, interval] = RANGES[range];
  const to = new Date();
  // Whole buckets: from the start of the hour (or UTC day) span ago, to now.
  const from = new Date(to.getTime() - span);
  if (interval === 'hour') from.setUTCMinutes(0, 0, 0); else from.setUTCHours(0, 0, 0, 0);
  let s;
  try {
    s = await get(`/v1/stats${qs({ interval, from: from.toISOString(), to: to.toISOString() })}`);
  } catch (e) {
    sec.append(e instanceof ApiError && e.status === 404
      ? message('notice', `Statistics are not available on this server yet (GET /v1/stats answered 404: ${e.message}).`)
      : errorBox(e));
    return;
  }
  if (!ctx.current()) return;
  const t = s.totals || {};
  const bt = t.bounced_by_type || {};
  const card = (label, value, sub) => h('div', { class: 'stat' }, h('div', { class: 'stat-label' }, label),
    h('div', { class: 'stat-value' }, value), sub ? h('div', { class: 'stat-sub' }, sub) : null);
  sec.append(h('div', { class: 'stat-grid' },
    card('Accepted', num(t.accepted)),
    card('Delivered', num(t.delivered), `delivery rate ${pct(t.delivered, t.accepted)}`),
    card('Bounced', num(t.bounced), `bounce rate ${pct(t.bounced, t.accepted)}`),
    card('Complained', num(t.complained), `complaint rate ${pct(t.complained, t.accepted)}`),
    card('Failed', num(t.failed)),
    card('Blocked', num(t.blocked)),
    card('Opened', num(t.opened)),
    card('Clicked', num(t.clicked))),
  h('p', { class: 'small muted' }, `Bounces by kind: hard ${num(bt.hard)}, soft ${num(bt.soft)}, block ${num(bt.block)}, undetermined ${num(bt.undetermined)}. From `,
    time(s.from), ' to ', time(s.to), ` by ${s.interval}.`));
  const buckets = s.buckets || [];
  if (!t.accepted && !buckets.some((b) => SERIES.some(([k]) => b[k]))) {
    sec.append(h('div', { class: 'empty' }, h('p', null, 'Nothing sent in this period. '),
      h('p', null, 'Once a domain is verified, send with POST /v1/emails: the numbers show here. ', h('a', { href: '#/domains' }, 'Domains →'))));
    return;
  }
  const chartBox = h('div', { class: 'chart card', role: 'img', 'aria-label': `Emails per ${s.interval}: ${SERIES.map(([k, l]) => `${l.toLowerCase()} ${t[k] || 0}`).join(', ')}` });
  sec.append(chartBox);
  const xs = buckets.map((b) => new Date(b.start).getTime() / 1000);
  const data = [xs, ...SERIES.map(([k]) => buckets.map((b) => b[k] || 0))];
  const width = () => Math.max(280, chartBox.clientWidth - 24);
  const plot = new uPlot({
    width: width(), height: 260,
    series: [{}, ...SERIES.map(([, label, stroke]) => ({ label, stroke, width: 2, points: { show: buckets.length < 60 } }))],
    axes: [{}, { size: 50 }],
    scales: { x: { time: true } },
    legend: { live: true },
  }, data, chartBox);
  const ro = new ResizeObserver(() => { if (chartBox.isConnected) plot.setSize({ width: width(), height: 260 }); else ro.disconnect(); });
  ro.observe(chartBox);
}

async function loadQueue(sec) {
  let q;
  try {
    q = await get('/v1/queue');
  } catch (e) {
    sec.append(errorBox(e));
    return;
  }
  if (!q.data.length) {
    sec.append(h('p', { class: 'muted' }, 'Nothing is waiting: every accepted email has been tried.'));
    return;
  }
  const states = ['ready', 'deferred', 'in_flight', 'held'];
  const by = Object.fromEntries(states.map((s) => [s, 0]));
  q.data.forEach((g) => { by[g.state] = (by[g.state] || 0) + g.recipients; });
  sec.append(h('p', null, `${num(q.total_recipients)} recipient${q.total_recipients === 1 ? '' : 's'} queued: `,
    states.map((s) => `${s.replace('_', ' ')} ${by[s]}`).join(', '), '. Oldest queued ', time(q.oldest_queued_at), '.'),
  table(['Domain', 'State', 'Recipients', 'Oldest queued', 'Next attempt'], q.data.map((g) => [
    g.domain, g.state.replace('_', ' '), num(g.recipients), time(g.oldest_queued_at, true), time(g.next_attempt_at, true),
  ])));

}
