// Placeholder dashboard (issue 31) until the front end lands: sign in with an API key,
// see who you are, sign out. It keeps to the contract of docs/dashboard.md: <form
// id="signin"> with <input name="key">; once signed in, button#signout and nav#menu; each
// page's main element has data-page and data-ready="true" once loaded.
const app = document.getElementById('app');
let session = null;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

function show(page, ...children) {
  app.replaceChildren(...children);
  app.dataset.page = page;
  app.dataset.ready = 'true';
}

function signInPage(message) {
  const form = el('form', { id: 'signin' },
    el('h1', {}, 'Sign in to posthorn'),
    el('label', { for: 'key' }, 'API key'),
    el('input', { id: 'key', name: 'key', type: 'password', autocomplete: 'off', required: '' }),
    el('button', { type: 'submit' }, 'Sign in'));
  if (message) form.append(el('p', { class: 'error', role: 'alert' }, message));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = form.elements.key.value;
    const res = await fetch('/dashboard/session', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ key }),
      credentials: 'same-origin',
    });
    if (res.ok) {
      session = await res.json();
      route();
    } else {
      const body = await res.json().catch(() => ({}));
      signInPage(body.message || `sign-in failed (${res.status})`);
    }
  });
  show('signin', form);
}

function homePage() {
  const signout = el('button', { id: 'signout', type: 'button' }, 'Sign out');
  signout.addEventListener('click', async () => {
    await fetch('/dashboard/session', {
      method: 'DELETE',
      headers: { 'X-CSRF-Token': session.csrf_token },
      credentials: 'same-origin',
    });
    session = null;
    window.location.hash = '#/';
    signInPage();
  });
  const nav = el('nav', { id: 'menu' },
    el('a', { href: '#/' }, 'Overview'),
    el('a', { href: '#/emails' }, 'Emails'),
    el('a', { href: '#/domains' }, 'Domains'));
  const page = (window.location.hash || '#/').replace(/^#\/?/, '').split('/')[0] || 'overview';
  show(page, nav,
    el('p', {}, `Signed in to ${session.account_id} with the key ${session.key.name || session.key.id} (${session.key.permission}).`),
    signout);
}

async function route() {
  if (!session) {
    const res = await fetch('/dashboard/session', { credentials: 'same-origin' });
    if (res.ok) session = await res.json();
  }
  if (session) homePage(); else signInPage();
}

window.addEventListener('hashchange', route);
route();
