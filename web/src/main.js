// The dashboard's entry point: the session (sign-in with an API key, sign-out), the shell
// (header, the menu nav#menu, main) and the hash router. Each page is a module with
// render(main, ctx); the router marks main with data-page and, once the page has loaded
// (or failed in words), data-ready="true".
import './style.css';
import { api, ApiError, setCsrf, setUnauthorizedHandler } from './api.js';
import { h, clear, message } from './dom.js';
import { showError } from './page.js';
import * as overview from './pages/overview.js';
import * as emails from './pages/emails.js';
import * as email from './pages/email.js';
import * as domains from './pages/domains.js';
import * as domain from './pages/domain.js';
import * as inbound from './pages/inbound.js';
import * as logs from './pages/logs.js';
import * as webhooks from './pages/webhooks.js';
import * as webhook from './pages/webhook.js';
import * as suppressions from './pages/suppressions.js';
import * as keys from './pages/keys.js';
import * as templates from './pages/templates.js';
import * as template from './pages/template.js';

const MENU = [
  ['#/', 'Overview'], ['#/emails', 'Emails'], ['#/domains', 'Domains'], ['#/inbound', 'Inbound'],
  ['#/logs', 'Logs'], ['#/webhooks', 'Webhooks'], ['#/suppressions', 'Suppressions'],
  ['#/keys', 'API keys'], ['#/templates', 'Templates'],
];

// [first path segment, has an id] → [page name, module]
const ROUTES = {
  '': ['overview', overview], emails: ['emails', emails], 'emails/:id': ['email', email],
  domains: ['domains', domains], 'domains/:id': ['domain', domain],
  inbound: ['inbound', inbound], 'inbound/:id': ['inbound-email', inbound],
  logs: ['logs', logs], webhooks: ['webhooks', webhooks], 'webhooks/:id': ['webhook', webhook],
  suppressions: ['suppressions', suppressions], keys: ['keys', keys],
  templates: ['templates', templates], 'templates/:id': ['template', template],
};

const app = document.getElementById('app');
let session = null;
let generation = 0;      // bumps on every navigation; a page's late answers check it
let timers = [];
let flash = null;     // a success message for the next render (after a change that reloads)

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { parts, query: new URLSearchParams(query) };
}

function stopTimers() {
  timers.forEach(clearInterval);
  timers = [];
}

// ---- sign-in ----

function showSignIn(note) {
  session = null;
  setCsrf(null);
  stopTimers();
  generation++;
  document.title = 'Sign in · posthorn';
  const err = h('div', { class: 'signin-msg', 'aria-live': 'polite' }, note ? message('notice', note) : null);
  const input = h('input', { name: 'key', type: 'password', autocomplete: 'off', spellcheck: 'false',
    required: true, placeholder: 'ph_…', 'aria-describedby': 'key-hint' });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h('form', { id: 'signin', class: 'card', onsubmit: async (ev) => {
    ev.preventDefault();
    button.disabled = true;
    clear(err);
    try {
      const s = await api('POST', '/dashboard/session', { key: input.value.trim() });
      startSession(s);
    } catch (e) {
      clear(err, message('error', e.status === 401
        ? `That key was not accepted: ${e.message}`
        : `Could not sign in: ${e.message}`));
      input.focus();
    } finally {
      button.disabled = false;
    }
  } },
  h('h1', null, 'Sign in to posthorn'),
  h('label', { for: 'signin-key' }, 'API key'),
  input,
  h('small', { id: 'key-hint', class: 'hint' },
    'Paste one of your account’s API keys. The key is sent once; the server then keeps a session in a cookie. ',
    'A “sending” key sees only what it may: the emails it sent.'),
  err, button);
  input.id = 'signin-key';
  clear(app, h('main', { id: 'main', class: 'signin', 'data-page': 'signin', 'data-ready': 'true' }, form));
  input.focus();
}

let expiryTimer = null;

function startSession(s) {
  session = s;
  setCsrf(s.csrf_token);
  clearTimeout(expiryTimer);
  const left = Date.parse(s.expires_at) - Date.now();
  if (left > 0 && left < 2 ** 31 - 1) {
    expiryTimer = setTimeout(() => { if (session === s) showSignIn('Your session has expired: sign in again.'); }, left);
  }
  renderShell();
  route();
}

async function signOut() {
  try {
    await api('DELETE', '/dashboard/session');
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 401) {
      alertInMain(`Could not sign out: ${e.message}`);
      return;
    }
  }
  if (location.hash && location.hash !== '#/') history.replaceState(null, '', '#/');
  showSignIn('You are signed out.');
}

function alertInMain(text) {
  const main = document.getElementById('main');
  if (main) main.prepend(message('error', text));
}

// ---- the shell ----

function renderShell() {
  const k = session.key || {};
  const toggle = h('button', { type: 'button', class: 'menu-toggle', 'aria-controls': 'menu',
    'aria-expanded': 'false', onclick: () => {
      const open = toggle.getAttribute('aria-expanded') !== 'true';
      toggle.setAttribute('aria-expanded', String(open));
      nav.classList.toggle('open', open);
    } }, 'Menu');
  const nav = h('nav', { id: 'menu', 'aria-label': 'Main' },
    h('ul', null, MENU.map(([href, label]) => h('li', null, h('a', { href }, label)))));
  nav.addEventListener('click', (ev) => {
    if (ev.target.closest('a')) { nav.classList.remove('open'); toggle.setAttribute('aria-expanded', 'false'); }
  });
  const who = h('div', { class: 'who' },
    h('span', { class: 'key-name', title: `account ${session.account_id}, key ${k.id}` },
      k.name || k.id || 'API key'),
    ' ', h('span', { class: `badge badge-perm-${k.permission}` }, k.permission || ''),
    k.domain ? h('span', { class: 'muted' }, ` · ${k.domain}`) : null,
    ' ', h('button', { type: 'button', id: 'signout', onclick: signOut }, 'Sign out'));
  clear(app,
    h('a', { class: 'skip', href: '#main', onclick: (ev) => { ev.preventDefault(); document.getElementById('main')?.focus(); } }, 'Skip to content'),
    h('header', { class: 'top' }, h('a', { class: 'brand', href: '#/' }, 'posthorn'), toggle, who),
    nav,
    h('main', { id: 'main', tabindex: '-1' }));
}

// ---- the router ----

async function route() {
  if (!session) return;
  stopTimers();
  const gen = ++generation;
  const { parts, query } = parseHash();
  const keyName = parts.length > 1 ? `${parts[0]}/:id` : (parts[0] || '');
  const found = parts.length <= 2 ? ROUTES[keyName] : undefined;
  const old = document.getElementById('main');
  const main = h('main', { id: 'main', tabindex: '-1', 'data-page': found ? found[0] : 'not-found' });
  old.replaceWith(main);
  if (flash) {
    main.append(h('div', { class: 'flash' }, message('success', flash)));
    flash = null;
  }
  for (const a of document.querySelectorAll('#menu a')) {
    const href = a.getAttribute('href');
    const here = href === '#/' ? parts.length === 0 : `#/${parts[0] || ''}` === href;
    if (here) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  if (!found) {
    document.title = 'Not found · posthorn';
    main.append(h('div', { class: 'not-found' }, h('h1', null, 'Not found'),
      h('p', null, 'There is no such page. '), h('a', { href: '#/' }, 'Go to the overview')));
    main.dataset.ready = 'true';
    return;
  }
  const [name, mod] = found;
  const ctx = {
    name, session, query, id: parts[1],
    current: () => gen === generation,
    // Changes the query of the current route (filters, pages): a new history entry.
    setQuery(params) {
      const u = new URLSearchParams();
      for (const [k, v] of Object.entries(params)) {
        if (Array.isArray(v)) v.filter(Boolean).forEach((x) => u.append(k, x));
        else if (v !== undefined && v !== null && v !== '') u.set(k, v);
      }
      const s = u.toString();
      location.hash = `#/${parts.map(encodeURIComponent).join('/')}${s ? `?${s}` : ''}`;
    },
    every(ms, fn) { if (gen === generation) timers.push(setInterval(() => { if (gen === generation) fn(); }, ms)); },
    reload: (note) => { flash = note || null; return route(); },
  };
  try {
    await mod.render(main, ctx);
  } catch (e) {
    if (gen !== generation) return;
    if (!(e instanceof ApiError)) console.warn(e);  // a bug of ours: shown, and kept for the developer
    showError(main, e);
  }
  if (gen === generation) main.dataset.ready = 'true';
}

window.addEventListener('hashchange', () => route());
setUnauthorizedHandler(() => {
  if (session) showSignIn('Your session has ended: sign in again.');
});

async function boot() {
  try {
    const s = await api('GET', '/dashboard/session');
    if (s.signed_in) startSession(s);
    else showSignIn(null);
  } catch (e) {
    showSignIn(e.status === 404 ? null : `The server answered: ${e.message}`);
  }
}
boot();
