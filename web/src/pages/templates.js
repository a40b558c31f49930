// Templates: the account's stored templates (GET /v1/templates) and a form to create one.
import { get, post, qs, enc } from '../api.js';
import { h, time, table, pager, field } from '../dom.js';
import { heading, emptyState, act } from '../page.js';

const LIMIT = 25;

export function parseVariables(text) {
  const t = text.trim();
  if (!t) return null;
  let v;
  try { v = JSON.parse(t); } catch (e) { throw new Error(`The variables are not valid JSON: ${e.message}`); }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('The variables must be a JSON object, e.g. {"name": "Ann"}');
  return v;
}

export async function render(main, ctx) {
  const page = Math.max(1, Number(ctx.query.get('page')) || 1);
  const out = h('div', { 'aria-live': 'polite', class: 'out' });
  main.append(heading('Templates'));
  const list = await get(`/v1/templates${qs({ page, limit: LIMIT })}`);
  if (!ctx.current()) return;
  if (list.pagination.total === 0) {
    main.append(emptyState('No template yet. A template keeps a subject, HTML and text with {{variables}}; send it with "template" in POST /v1/emails. Create one below.'));
  } else {
    main.append(table(['Name', 'Subject', 'Updated'], list.data.map((t) => [
      h('a', { href: `#/templates/${enc(t.id)}` }, t.name), t.subject, time(t.updated_at, true),
    ]), { class: 'list' }),
    pager({ page, total: list.pagination.total, hasMore: list.pagination.has_more, limit: LIMIT }, (p) => ctx.setQuery({ page: p })));
  }
  const name = h('input', { name: 'name', required: true, maxlength: '100', placeholder: 'welcome' });
  const subject = h('input', { name: 'subject', required: true, placeholder: 'Welcome, {{name}}' });
  const html = h('textarea', { name: 'html', rows: '6', placeholder: '<p>Hello {{name}}</p>' });
  const text = h('textarea', { name: 'text', rows: '4', placeholder: 'Hello {{name}}' });
  const vars = h('textarea', { name: 'variables', rows: '2', placeholder: '{"name": "there"}' });
  const form = h('form', { class: 'card', id: 'add-template', onsubmit: async (ev) => {
    ev.preventDefault();
    const t = await act(out, async () => {
      const body = { name: name.value.trim(), subject: subject.value };
      if (html.value.trim()) body.html = html.value;
      if (text.value.trim()) body.text = text.value;
      const v = parseVariables(vars.value);
      if (v) body.variables = v;
      if (!body.html && !body.text) throw new Error('Give the HTML, the text, or both.');
      return post('/v1/templates', body);
    }, null, form.querySelector('button'));
    if (t) location.hash = `#/templates/${enc(t.id)}`;
  } },
  h('h2', null, 'Create a template'), field('Name', name, 'Unique in the account; used as "template" when sending.'),
  field('Subject', subject), field('HTML', html), field('Text', text), field('Default variables (JSON)', vars),
  h('button', { type: 'submit', class: 'primary' }, 'Create template'), out);
  main.append(form);
}
