// The API module: every request of the page goes through api(). Same-origin cookie session
// (no Authorization header), X-CSRF-Token on every change, JSON error bodies turned into
// ApiError with the server's words, and a 401 anywhere sends the page back to sign-in.

let csrfToken = null;
let onUnauthorized = () => {};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function setCsrf(token) { csrfToken = token; }
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

export async function api(method, path, body, { raw = false } = {}) {
  const headers = { Accept: 'application/json' };
  if (!['GET', 'HEAD'].includes(method) && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let r;
  try {
    r = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'NETWORK', `The server could not be reached (${e.message}).`);
  }
  if (raw && r.ok) return r;
  const text = await r.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!r.ok) {
    const msg = (data && typeof data.message === 'string' && data.message)
      || `The server answered ${r.status} ${r.statusText || ''}`.trim();
    const err = new ApiError(r.status, (data && data.code) || `HTTP_${r.status}`, msg);
    if (r.status === 401 && !path.startsWith('/dashboard/session')) onUnauthorized(err);
    throw err;
  }
  return data;
}

export const get = (p) => api('GET', p);
export const post = (p, b) => api('POST', p, b);
export const patch = (p, b) => api('PATCH', p, b);
export const del = (p) => api('DELETE', p);

// A query string from an object, without empty values; arrays repeat the name.
export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.filter((x) => x !== '').forEach((x) => u.append(k, x));
    else u.append(k, String(v));
  }
  const s = u.toString();
  return s ? `?${s}` : '';
}

export const enc = encodeURIComponent;
