// svgdom.js - runs the script embedded in a heapscope flame SVG against a minimal DOM: zoom, reset and search must work
'use strict';
const fs = require('fs');
const svg = fs.readFileSync(process.argv[2], 'utf8');

function unxml(s) {
    return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}
function attrs(s) {
    const a = {};
    for (const m of s.matchAll(/([\w-]+)="([^"]*)"/g)) a[m[1]] = unxml(m[2]);
    return a;
}
class El {
    constructor(tag, a, text) {
        this.tag = tag; this.a = a || {}; this.kids = []; this.textContent = text || ''; this.style = {}; this.on = {};
    }
    getAttribute(n) { return n in this.a ? this.a[n] : null; }
    setAttribute(n, v) { this.a[n] = String(v); }
    getElementsByTagName(t) { return this.kids.filter((k) => k.tag === t); }
    addEventListener(ev, f) { this.on[ev] = f; }
}
const byId = {}, groups = [];
for (const m of svg.matchAll(/<text id="(\w+)"[^>]*>([^<]*)<\/text>/g)) byId[m[1]] = new El('text', { id: m[1] }, m[2]);
for (const m of svg.matchAll(/<g ([^>]*)><title>([^<]*)<\/title><rect ([^>]*)\/><text ([^>]*)>([^<]*)<\/text><\/g>/g)) {
    const g = new El('g', attrs(m[1]));
    g.kids.push(new El('title', {}, unxml(m[2])), new El('rect', attrs(m[3])), new El('text', attrs(m[4]), unxml(m[5])));
    groups.push(g);
}
if (!groups.length) throw new Error('no frames found');
let onload = null, answer = null;
const documentListeners = {};
global.window = { addEventListener: (ev, f) => { if (ev === 'load') onload = f; } };
global.document = {
    getElementById: (id) => byId[id],
    getElementsByTagName: (t) => (t === 'g' ? groups : []),
    addEventListener: (ev, f) => { documentListeners[ev] = f; },
};
global.prompt = () => answer;
const script = svg.split('<![CDATA[')[1].split(']]>')[0];
eval(script); // eslint-disable-line no-eval
onload();

function rect(g) { return g.getElementsByTagName('rect')[0]; }
function check(cond, what) { if (!cond) { console.error('FAIL: ' + what); process.exit(1); } }

// zoom into the narrowest frame that is not the root: it must fill the width, the root must stay as an ancestor
const target = groups.filter((g) => +g.getAttribute('data-d') > 0).sort((a, b) => a.getAttribute('data-w') - b.getAttribute('data-w'))[0];
target.on.click();
check(Math.abs(+rect(target).getAttribute('width') - 1180) < 0.01, 'zoomed frame fills the width: ' + rect(target).getAttribute('width'));
check(groups[0].style.display === '' && groups[0].style.opacity === '0.6', 'root shown as ancestor');
const hidden = groups.filter((g) => g.style.display === 'none').length;
check(hidden > 0 || groups.length <= 2, 'frames outside the zoom hidden');
byId.reset.on.click();
check(groups.every((g) => g.style.display === ''), 'reset shows every frame');
check(Math.abs(+rect(target).getAttribute('width') - 1180 * +target.getAttribute('data-w')) < 0.01, 'reset restores widths');

// search: the matched share is the union of the matching frames' widths
const name = target.getAttribute('data-n');
answer = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
documentListeners.keydown({ ctrlKey: true, key: 'f', preventDefault() {} });
check(/matched .*: [0-9.]+% of all/.test(byId.matched.textContent), 'search shows a share: ' + byId.matched.textContent);
check(rect(target).getAttribute('fill') === 'rgb(230,90,200)', 'search highlights the frame');
// hover fills the details line
target.on.mouseover();
check(byId.details.textContent.startsWith(name), 'hover details: ' + byId.details.textContent);
console.log('ok');
