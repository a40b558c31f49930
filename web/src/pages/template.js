// One template: edit it (PATCH), delete it, and see it rendered with variables
// (POST /v1/templates/{id}/render), the HTML shown safely (htmlview.js).
import { get, post, patch, del, enc } from '../api.js';
import { h, clear, time, field, confirmButton, pre } from '../dom.js';
import { heading, act } from '../page.js';
import { htmlView } from '../htmlview.js';
import { parseVariables } from './templates.js';

export async function render(main, ctx) {
  main.append(h('a', { href: '#/templates', class: 'back' }, '← Templates'), heading('Template'));
  const t = await get(`/v1/templates/${enc(ctx.id)}`);
  if (!ctx.current()) return;
  main.querySelector('.page-head h1').textContent = t.name;
  document.title = `${t.name} · posthorn`;
  const out = h('div', { 'aria-live': 'polite', class: 'out' });
  const name = h('input', { name: 'name', required: true, value: t.name, maxlength: '100' });
  const subject = h('input', { name: 'subject', required: true, value: t.subject });
  const html = h('textarea', { name: 'html', rows: '10', value: t.html || '' });
  const text = h('textarea', { name: 'text', rows: '6', value: t.text || '' });
  const vars = h('textarea', { name: 'variables', rows: '3', value: Object.keys(t.variables || {}).length ? JSON.stringify(t.variables, null, 2) : '' });
  const form = h('form', { class: 'card', id: 'edit-template', onsubmit: async (ev) => {
    ev.preventDefault();
    await act(out, () => patch(`/v1/templates/${enc(t.id)}`, {
      name: name.value.trim(), subject: subject.value,
      html: html.value.trim() ? html.value : null, text: text.value.trim() ? text.value : null,
      variables: parseVariables(vars.value),
    }), 'Saved.', form.querySelector('button[type=submit]'));
  } },
  h('h2', null, 'Edit'), field('Name', name), field('Subject', subject), field('HTML', html), field('Text', text),
  field('Default variables (JSON)', vars),
  h('p', { class: 'small muted' }, 'Created ', time(t.created_at), ', updated ', time(t.updated_at), '.'),
  h('button', { type: 'submit', class: 'primary' }, 'Save'));

  const rvars = h('textarea', { name: 'render-variables', rows: '3', placeholder: '{"name": "Ann"}' });
  const shown = h('div', { class: 'rendered' });
  const renderForm = h('form', { class: 'card', id: 'render-template', onsubmit: async (ev) => {
    ev.preventDefault();
    const r = await act(out, () => post(`/v1/templates/${enc(t.id)}/render`, { variables: parseVariables(rvars.value) }),
      null, renderForm.querySelector('button'));
    if (!r) return;
    clear(shown,
      h('p', null, h('strong', null, 'Subject: '), r.subject),
      r.html !== null ? h('div', null, h('h3', null, 'HTML'), htmlView(r.html)) : null,
      r.text !== null ? h('div', null, h('h3', null, 'Text'), pre(r.text)) : null);
  } },
  h('h2', null, 'Preview'), field('Variables for the preview (JSON)', rvars, 'Over the defaults above. The saved template is rendered: save first.'),
  h('button', { type: 'submit' }, 'Render'), shown);

  main.append(out, form, renderForm, h('section', { class: 'card danger-zone' }, h('h2', null, 'Delete'),
    confirmButton('Delete', `Delete the template ${t.name}? Sends naming it are refused from then on.`, async () => {
      const r = await act(out, () => del(`/v1/templates/${enc(t.id)}`));
      if (r !== undefined) location.hash = '#/templates';
    })));
}
