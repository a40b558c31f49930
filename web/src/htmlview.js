// Shows untrusted email HTML (a rendered template, an inbound message) inside the page
// without running anything of it and without breaking the page's CSP: the HTML is parsed
// inertly (DOMParser), scripts, frames, forms, event handlers and links are dropped, inline
// style attributes become CSSOM (el.style.cssText, which CSP allows) and <style> blocks a
// constructed stylesheet, all inside a shadow root so that nothing leaks into the page.
// Images from other origins are not loaded (no third-party request): their alt text shows.
import { h } from './dom.js';

const DROP = 'script,iframe,frame,frameset,object,embed,form,input,button,textarea,select,link,meta,base,noscript,template,svg,math';

// A parsed document inherits the page's CSP, so the parser itself would report every style
// attribute and <style> block as a violation. They are renamed before parsing: style= in a
// tag becomes data-ph-style=, and <style> a data block (<script type="text/x-ph-css">, raw
// text that nothing runs), read back below.
function defuse(html) {
  return html
    .replace(/<[a-zA-Z][^>]*>/g, (tag) => tag.replace(/(\s)style(\s*=)/gi, '$1data-ph-style$2'))
    .replace(/<style\b[^>]*>/gi, '<script type="text/x-ph-css">')
    .replace(/<\/style\s*>/gi, '</script>');
}

export function htmlView(html) {
  const host = h('div', { class: 'html-view' });
  const root = host.attachShadow({ mode: 'open' });
  const doc = new DOMParser().parseFromString(defuse(html || ''), 'text/html');
  const css = [...doc.querySelectorAll('script[type="text/x-ph-css"]')].map((s) => s.textContent).join('\n');
  doc.querySelectorAll(`style,${DROP}`).forEach((n) => n.remove());
  let blocked = 0;
  const styled = [];
  for (const el of doc.body.querySelectorAll('*')) {
    for (const a of [...el.attributes]) {
      const n = a.name.toLowerCase();
      if (n.startsWith('on') || n === 'srcset' || n === 'background' || n === 'ping' || n === 'formaction') el.removeAttribute(a.name);
      else if (n === 'style' || n === 'data-ph-style') { styled.push([el, a.value]); el.removeAttribute(a.name); }
    }
    if (el.tagName === 'A') {
      const href = el.getAttribute('href');
      el.removeAttribute('href');
      if (href) el.setAttribute('title', href);
    }
    if (el.tagName === 'IMG') {
      const src = el.getAttribute('src') || '';
      if (!src.startsWith('data:')) {
        el.removeAttribute('src');
        blocked++;
        el.replaceWith(document.createTextNode(el.getAttribute('alt') ? `[image: ${el.getAttribute('alt')}]` : '[image]'));
      }
    }
  }
  const body = document.importNode(doc.body, true);
  const wrap = document.createElement('div');
  wrap.append(...body.childNodes);
  // The style attributes, as CSSOM on the imported copies (same order of elements).
  const imported = wrap.querySelectorAll('*');
  const originals = [...doc.body.querySelectorAll('*')];
  for (const [el, value] of styled) {
    const i = originals.indexOf(el);
    if (i >= 0 && imported[i]) imported[i].style.cssText = value.replace(/url\([^)]*\)/gi, 'none');
  }
  if (css) {
    try {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(css.replace(/@import[^;]*;/gi, '').replace(/url\([^)]*\)/gi, 'none'));
      root.adoptedStyleSheets = [sheet];
    } catch { /* a sheet the browser cannot read is left out */ }
  }
  root.append(wrap);
  const frag = h('div', { class: 'html-view-wrap' }, host,
    blocked ? h('p', { class: 'small muted' }, `${blocked} image${blocked === 1 ? '' : 's'} from elsewhere not loaded.`) : null);
  return frag;
}
