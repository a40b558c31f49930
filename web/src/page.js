// What pages share: the page heading, errors in words (404 → .not-found, 403 → what the key
// may not do), and a loading placeholder.
import { h, clear, message } from './dom.js';
import { ApiError } from './api.js';

export function heading(title, ...extra) {
  document.title = `${title} · posthorn`;
  return h('div', { class: 'page-head' }, h('h1', null, title), ...extra);
}

export function errorBox(e, what) {
  if (e instanceof ApiError && e.status === 404) {
    return h('div', { class: 'not-found', role: 'alert' },
      h('h2', null, 'Not found'),
      h('p', null, `${what || 'This item'} does not exist in your account (${e.message}).`));
  }
  if (e instanceof ApiError && e.status === 403) {
    return h('div', { class: 'forbidden msg msg-error', role: 'alert' },
      h('strong', null, 'Your API key may not do this. '), e.message,
      h('p', { class: 'hint' }, 'Sign in with a full-access key to see this page.'));
  }
  return message('error', e instanceof ApiError ? `Error: ${e.message}` : `Something went wrong in the page: ${e.message}`);
}

export function showError(main, e, what) {
  const head = main.querySelector('.page-head');
  clear(main, head, errorBox(e, what));
}

// Runs an action from a button or form: disables it, shows the outcome in `out`.
export async function act(out, fn, okText, button) {
  if (button) button.disabled = true;
  clear(out);
  try {
    const r = await fn();
    if (okText) clear(out, message('success', typeof okText === 'function' ? okText(r) : okText));
    return r;
  } catch (e) {
    clear(out, errorBox(e));
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

export function emptyState(text, ...more) {
  return h('div', { class: 'empty' }, h('p', null, text), ...more);
}

export function loading() {
  return h('p', { class: 'loading muted' }, 'Loading…');
}
