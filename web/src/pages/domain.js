// One domain: its DNS records with their status and copy buttons, Verify, the sending /
// inbound / tracking switches (PATCH), DKIM rotation and deletion.
import { get, post, patch, del, enc } from '../api.js';
import { h, clear, time, badge, table, copyButton, confirmButton, message } from '../dom.js';
import { heading, act } from '../page.js';

export async function render(main, ctx) {
  main.append(h('a', { href: '#/domains', class: 'back' }, '← Domains'), heading('Domain'));
  let d = await get(`/v1/domains/${enc(ctx.id)}`);
  if (!ctx.current()) return;
  const out = h('div', { 'aria-live': 'polite', class: 'out' });
  const view = h('div');
  main.append(out, view);

  function draw() {
    main.querySelector('.page-head h1').textContent = d.domain;
    document.title = `${d.domain} · posthorn`;
    clear(view, summary(d), switches(d), recordsCard(d), dkimCard(d), dangerCard(d));
  }

  function summary(dom) {
    const verify = h('button', { type: 'button', class: 'primary', id: 'verify', onclick: async () => {
      const v = await act(out, () => post(`/v1/domains/${enc(dom.id)}/verify`), null, verify);
      if (!v) return;
      d = v;
      draw();
      clear(out, v.dns_error ? message('error', v.dns_error)
        : message(v.status === 'VERIFIED' ? 'success' : 'notice', v.status === 'VERIFIED'
          ? 'Verified: every DKIM, SPF and DMARC record is right. You can send from this domain.'
          : `Status ${v.status}: some records are missing or wrong (see each record below). DNS changes can take a while to show.`));
    } }, 'Verify DNS records');
    return h('section', { class: 'card summary' },
      h('p', null, 'Status: ', badge(dom.status, `domain-${dom.status.toLowerCase()}`), ' ', verify),
      dom.status === 'VERIFIED' ? null : h('p', { class: 'hint' },
        'Publish the records below at your DNS provider, then press Verify. DKIM, SPF and DMARC decide the status; the MX record is only needed to receive mail.'),
      h('dl', { class: 'facts' },
        h('dt', null, 'Id'), h('dd', null, h('code', null, dom.id)),
        h('dt', null, 'Created'), h('dd', null, time(dom.created_at)),
        h('dt', null, 'Last checked'), h('dd', null, time(dom.last_checked_at)),
        h('dt', null, 'Verified'), h('dd', null, time(dom.verified_at))));
  }

  function switches(dom) {
    const sw = (label, checked, body, hint) => {
      const input = h('input', { type: 'checkbox', role: 'switch', checked, onchange: async () => {
        input.disabled = true;
        const r = await act(out, () => patch(`/v1/domains/${enc(dom.id)}`, body(input.checked)),
          `${label}: ${input.checked ? 'on' : 'off'}.`);
        input.disabled = false;
        if (!r) { input.checked = !input.checked; return; }
        d = await get(`/v1/domains/${enc(dom.id)}`);
      } });
      return h('label', { class: 'switch' }, input, h('span', null, label), hint ? h('small', { class: 'hint' }, hint) : null);
    };
    return h('section', { class: 'card', 'aria-labelledby': 'sw-h' }, h('h2', { id: 'sw-h' }, 'Settings'),
      h('div', { class: 'switches' },
        sw('Sending', dom.config.sending, (v) => ({ config: { sending: v } }), 'When off, sends from this domain are refused (403).'),
        sw('Inbound', dom.config.inbound, (v) => ({ config: { inbound: v } }), 'Accept mail for this domain (needs the MX record).'),
        sw('Open tracking', dom.tracking.open_tracking, (v) => ({ tracking: { open_tracking: v } })),
        sw('Click tracking', dom.tracking.click_tracking, (v) => ({ tracking: { click_tracking: v } }),
          `Tracking host: ${dom.tracking.label}.${dom.domain}`)));
  }

  function recordsCard(dom) {
    const r = dom.records;
    const rows = [];
    const add = (what, rec) => {
      if (!rec) return;
      rows.push([
        what,
        rec.type + (rec.priority !== undefined ? ` ${rec.priority}` : ''),
        h('span', { class: 'dns' }, h('code', null, rec.host), ' ', copyButton(rec.host, 'Copy name')),
        h('span', { class: 'dns' }, h('code', null, rec.value), ' ', copyButton(rec.value, 'Copy value')),
        rec.status ? h('span', null, badge(rec.status, `rec-${rec.status.toLowerCase()}`),
          rec.status === 'MISMATCH' && rec.found && rec.found.length ? h('div', { class: 'small' }, `found: ${rec.found.join(', ')}`) : null,
          rec.error ? h('div', { class: 'small warn' }, rec.error) : null)
          : h('span', { class: 'muted' }, 'not checked yet'),
      ]);
    };
    for (const k of r.dkim || []) add(`DKIM ${k.selector}${k.state ? ` (${k.state.toLowerCase()})` : ''}`, k);
    add('SPF', r.spf);
    add('DMARC', r.dmarc);
    add('Inbound MX (optional)', r.inbound);
    add('Tracking (optional)', r.tracking);
    add('Return path (optional)', r.return_path);
    return h('section', { class: 'card', 'aria-labelledby': 'rec-h' }, h('h2', { id: 'rec-h' }, 'DNS records'),
      table(['Record', 'Type', 'Name', 'Value', 'Status'], rows, { class: 'records' }));
  }

  function dkimCard(dom) {
    const k = dom.dkim || {};
    const rotate = h('button', { type: 'button', id: 'rotate-dkim', onclick: async () => {
      const r = await act(out, () => post(`/v1/domains/${enc(dom.id)}/dkim/rotate`),
        (x) => `A new key for ${x.dkim.pending_selector} is made; it signs once the DKIM zone serves it.`, rotate);
      if (r) { d = r; draw(); }
    } }, 'Rotate the DKIM key');
    return h('section', { class: 'card', 'aria-labelledby': 'dk-h' }, h('h2', { id: 'dk-h' }, 'DKIM key'),
      h('p', null, `Signing selector: ${k.active_selector || '?'}. Rotation: ${k.rotation === 'PENDING' ? `pending (new key for ${k.pending_selector})` : 'none'}. Last rotated: `, time(k.rotated_at)),
      k.rotation === 'PENDING' ? null : rotate);
  }

  function dangerCard(dom) {
    return h('section', { class: 'card danger-zone' }, h('h2', null, 'Delete'),
      h('p', null, 'Erases the domain and its DKIM keys: sends from it are refused from then on, and its mail still queued fails. Its emails stay readable.'),
      confirmButton('Delete', `Delete ${dom.domain}?`, async () => {
        const r = await act(out, () => del(`/v1/domains/${enc(dom.id)}`));
        if (r !== undefined) location.hash = '#/domains';
      }));
  }

  draw();
}
