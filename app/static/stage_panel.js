// Triton Lens stage panel (Streamlit components v2, no build step).
//
// `tlens_stage_panel` (data: the bytes of payload.py, one panel). The page's followed Python
// line and presentation mode come from `tlens_page_state` (page.js) through the shared store
// `window.__tlensStage`; either module may load first. Panels draw only the lines in view: a
// 20,000-line SASS text is 20,000 strings in memory and ~100 <div>s in the page. Every piece of
// stage text goes into the page as text nodes (never as HTML), so markup in a kernel is shown,
// not run.
//
// Streamlit runs a panel's code again only when its data changes; a re-sent copy of the same
// text (same digest) keeps the panel as it is: scroll position, search, selection.

const STORE = window.__tlensStage || (window.__tlensStage = {});
Object.assign(STORE, {
  panels: new Set(),        // live Panel objects
  py: null,                 // followed Python line, shared by every panel
  present: false,           // presentation mode (large type, panels fill the screen)
  zoom: Number(localStorage.getItem("tlens-zoom")) || 1,
  invoked: 0,               // times Streamlit ran a panel's component code (benchmarks, tests)
  decoded: 0,               // payloads decoded since the page loaded
  drawn: 0,                 // windows of lines drawn
  timings: [],              // [stage, lines, ms to gunzip + parse, ms to lay out + draw] per payload
}, STORE.panels ? STORE : {});

const FULL = 800;           // texts up to this many lines are drawn whole (no virtualisation)
const OVERSCAN = 60;        // lines drawn above and below the visible ones
const TAB = 4;              // tab stops (PTX indents with tabs)
const RUN = /([A-Za-z])(\d+)/g;
const CODES = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const CHIPS = [["mem-vec", "vector"], ["mem-scalar", "scalar"], ["mem-shared", "shared"], ["tc", "tensor core"]];

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(label, title, onClick) {
  const b = el("button", "tp-btn", label);
  b.type = "button";
  b.title = title;
  b.setAttribute("aria-label", title);
  b.addEventListener("click", onClick);
  return b;
}

function columns(line) {
  // display width with tabs expanded: wrapped rows and the scroll width come from it
  let c = 0;
  for (let i = 0; i < line.length; i++) c = line.charCodeAt(i) === 9 ? c + TAB - (c % TAB) : c + 1;
  return c;
}

async function decode(bytes) {
  const stream = new Blob([bytes.subarray(36)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function digestOf(bytes) {
  const head = new TextDecoder().decode(bytes.subarray(0, 36));
  if (!head.startsWith("TLP1")) throw new Error("stage panel: unknown payload");
  return head.slice(4);
}

function scrollerOf(node) {
  // the element the page scrolls in (Streamlit scrolls its main block, not the window)
  for (let n = node; n; n = n.parentNode || n.host) {
    if (n.nodeType === 1) {
      const oy = getComputedStyle(n).overflowY;
      if ((oy === "auto" || oy === "scroll") && n.scrollHeight > n.clientHeight) return n;
    }
  }
  return document.scrollingElement;
}

class Panel {
  constructor(parent) {
    this.parent = parent;
    this.root = el("div", "tlens-panel");
    this.root.style.height = "360px";
    this.head = el("div", "tp-head");
    this.title = el("span", "tp-title", "…");
    this.chips = el("span", "tp-chips");
    this.search = el("input", "tp-search");
    this.search.type = "search";
    this.search.setAttribute("aria-label", "Search this panel");
    this.count = el("span", "tlens-chip hit tp-count");
    this.count.hidden = true;
    const only = el("label", "tp-only");
    this.onlyBox = el("input");
    this.onlyBox.type = "checkbox";
    only.title = "Show only the matching lines";
    only.append(this.onlyBox, "only");
    this.wrapBtn = button("wrap", "Wrap long lines", () => this.setWrap(!this.wrap));
    const smaller = button("A−", "Smaller text (every panel)", () => setZoom(STORE.zoom / 1.1));
    const bigger = button("A+", "Larger text (every panel)", () => setZoom(STORE.zoom * 1.1));
    this.loadBtn = button("⤓ load", "Jump to the first global load", () => this.jumpToLoad());
    this.loadBtn.classList.add("tp-load");
    this.loadBtn.hidden = true;
    this.dl = button("⬇", "Download", () => this.download());
    this.dl.classList.add("tp-dl");
    const name = el("span", "tp-name");
    name.append(this.title, this.chips);
    const tools = el("span", "tp-tools");
    tools.append(this.search, this.count, only, this.loadBtn, this.wrapBtn, smaller, bigger, this.dl);
    this.head.append(name, tools);
    this.scroll = el("div", "tp-scroll");
    this.sizer = el("div", "tp-sizer");
    this.win = el("div", "tp-win");
    this.sizer.append(this.win);
    this.scroll.append(this.sizer);
    this.root.append(this.head, this.scroll);
    parent.append(this.root);

    this.d = null;
    this.digest = null;
    this.wrap = false;
    this.view = null;       // line indices shown when "only" filters, else null (all lines)
    this.hits = null;       // Set of matching line indices
    this.hitList = [];
    this.sel = new Set();
    this.drawn = [-1, -1];
    this.frame = 0;

    this.saved = [0, 0];
    this.scroll.addEventListener("scroll", () => {
      if (this.root.isConnected) this.saved = [this.scroll.scrollTop, this.scroll.scrollLeft];
      this.schedule();
    });
    this.win.addEventListener("click", (ev) => this.onLine(ev));
    this.win.addEventListener("keydown", (ev) => { if (ev.key === "Enter") this.onLine(ev); });
    let timer = 0;
    this.search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.find(this.search.value, 0), 120);
    });
    this.search.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter") return;
      clearTimeout(timer);
      if (this.query !== this.search.value.toLowerCase()) this.find(this.search.value, 0);
      else this.next(ev.shiftKey ? -1 : 1);
    });
    this.onlyBox.addEventListener("change", () => this.setOnly(this.onlyBox.checked));
    // Streamlit may move a panel in the page when elements above it come or go; a moved
    // element loses its scroll position, so put it back (the observer fires on re-attach)
    new ResizeObserver(() => {
      this.layout();
      if (this.scroll.scrollTop !== this.saved[0] || this.scroll.scrollLeft !== this.saved[1]) {
        this.scroll.scrollTop = this.saved[0];
        this.scroll.scrollLeft = this.saved[1];
      }
    }).observe(this.scroll);
  }

  load(bytes) {
    const digest = digestOf(bytes);
    if (digest === this.digest || digest === this.pending) return;
    this.pending = digest;
    const t0 = performance.now();
    decode(bytes).then((d) => {
      if (this.pending !== digest) return;
      this.pending = null;
      this.digest = digest;
      STORE.decoded += 1;
      const t1 = performance.now();
      this.setData(d);
      STORE.timings.push([d.stage, d.lines.length, Math.round(t1 - t0), Math.round(performance.now() - t1),
                          Math.round(t0)]);
    }).catch((e) => { this.title.textContent = "Could not show this stage: " + e.message; });
  }

  setData(d) {
    // a new text opens where the kernel is, unless the user scrolled away from there
    const reopen = this.openedAt === undefined || this.scroll.scrollTop === this.openedAt;
    this.d = d;
    const n = d.lines.length;
    this.kinds = new Array(n);
    for (const [k, v] of Object.entries(d.kinds)) this.kinds[Number(k) - 1] = v;
    this.cols = new Int32Array(n);
    let widest = 0;
    for (let i = 0; i < n; i++) { const c = columns(d.lines[i]); this.cols[i] = c; if (c > widest) widest = c; }
    this.widest = widest;
    this.lower = null;
    this.root.dataset.stage = d.stage;
    this.root.dataset.lines = String(n);
    this.title.textContent = d.label;
    this.search.placeholder = "search " + d.label;
    this.dl.title = "Download " + d.file;
    this.dl.setAttribute("aria-label", "Download " + d.label);
    this.chips.replaceChildren();
    for (const [cls, word] of CHIPS) {
      const count = d.summary[word];
      if (!count) continue;
      const widest = d.summary.widest.replace(" × ", "×").replace("-bit", "");      // "v4×32"
      const label = cls === "mem-vec" ? `${count} vector (${widest})` : `${count} ${word}`;
      const chip = el("span", "tlens-chip " + cls, label);
      chip.title = d.legend[cls];
      this.chips.append(chip);
    }
    this.chips.append(el("span", "tlens-chip", `${n.toLocaleString("en-US")} lines`));
    this.setWrap(localStorage.getItem("tlens-wrap-" + d.stage) === "1", false);
    if (this.search.value) this.find(this.search.value, -1);
    STORE.panels.add(this);
    this.layout(true);
    this.applySel(STORE.py, true);      // a panel added while a line is followed shows its lines
    this.loadBtn.hidden = !(d.open && d.open.load);
    if (!this.sel.size && reopen) this.open();
    this.root.dataset.ready = "1";
  }

  // ---- geometry ---------------------------------------------------------------------------
  fontSize() {
    if (!STORE.present) return 12.5 * STORE.zoom;
    // presentation: as large as lets 64 columns (and the line numbers) fit the panel's width
    const digits = Math.max(3, String(this.d.lines.length).length);
    const width = this.root.clientWidth - 2 - 16 - 12;      // borders, scrollbar, padding
    const size = width / ((64 + digits + 1.6) * this.chRatio());
    return Math.max(13, Math.min(24, size)) * STORE.zoom;
  }

  chRatio() {
    if (!STORE.chRatio) {
      const probe = el("span", "tp-probe", "0".repeat(100));
      probe.style.fontSize = "100px";
      this.scroll.append(probe);
      STORE.chRatio = probe.getBoundingClientRect().width / 100 / 100 || 0.6;
      probe.remove();
    }
    return STORE.chRatio;
  }

  layout(force) {
    if (!this.d || !this.root.isConnected) return;
    const fs = this.fontSize();
    this.root.style.setProperty("--tp-fs", fs.toFixed(2) + "px");
    const probe = el("span", "tp-probe", "0".repeat(50));     // a line's height, a character's width
    this.scroll.append(probe);
    const box = probe.getBoundingClientRect();
    probe.remove();
    this.rowH = box.height || fs * 1.45;
    this.chW = box.width / 50 || fs * 0.6;
    const digits = Math.max(3, String(this.d.lines.length).length);
    this.gutter = (digits + 1.6) * this.chW;
    this.root.style.setProperty("--tp-gutter", this.gutter.toFixed(1) + "px");
    this.fit();
    const count = this.view ? this.view.length : this.d.lines.length;
    const codeW = this.scroll.clientWidth - this.gutter - 14;
    const perRow = Math.max(8, Math.floor(codeW / this.chW));
    this.tops = null;
    if (this.wrap) {
      const tops = new Float64Array(count + 1);
      for (let k = 0; k < count; k++) {
        const i = this.view ? this.view[k] : k;
        tops[k + 1] = tops[k] + Math.max(1, Math.ceil(this.cols[i] / perRow)) * this.rowH;
      }
      this.tops = tops;
      this.sizer.style.width = "";
      this.win.style.width = "100%";
    } else {
      const w = Math.ceil(this.gutter + this.widest * this.chW + 16);
      this.sizer.style.width = w + "px";
      this.win.style.width = w + "px";
    }
    this.sizer.style.height = Math.ceil(this.top(count)) + "px";
    this.drawn = [-1, -1];
    this.draw();
    this.root.dataset.mode = STORE.present ? "present" : "normal";     // laid out for it (tests wait on it)
  }

  fit() {
    // the panel reaches down to the bottom of the screen (as the page first shows, unscrolled),
    // at least 12 lines (25 when presenting); one that starts low on the page gets 640 px
    const vh = window.innerHeight;
    const sc = scrollerOf(this.parent.host || this.parent);
    const top = this.root.getBoundingClientRect().top + (sc.scrollTop || 0);
    const head = this.head.getBoundingClientRect().height + 2;
    const minH = head + (STORE.present ? 25.5 : 12) * this.rowH;
    const room = vh - top - 12;
    const h = Math.round(room >= minH ? room : Math.min(Math.max(minH, 640), Math.max(vh - 16, minH)));
    if (Math.abs(h - this.root.getBoundingClientRect().height) > 3) this.root.style.height = h + "px";
  }

  top(k) { return this.tops ? this.tops[k] : k * this.rowH; }

  indexAt(y) {
    // first row index whose bottom is below y
    const count = this.view ? this.view.length : this.d.lines.length;
    if (!this.tops) return Math.min(count - 1, Math.max(0, Math.floor(y / this.rowH)));
    let lo = 0, hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.tops[mid + 1] <= y) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  draw(force) {
    if (!this.d) return;
    const count = this.view ? this.view.length : this.d.lines.length;
    let first = 0, last = count;
    if (count > FULL) {
      const y = this.scroll.scrollTop, h = this.scroll.clientHeight;
      const a = this.indexAt(y), b = this.indexAt(y + h) + 1;
      // the lines drawn still cover the view with room to spare: nothing to do
      const roomAbove = a - this.drawn[0] > 10 || this.drawn[0] === 0;
      const roomBelow = this.drawn[1] - b > 10 || this.drawn[1] === count;
      if (!force && this.drawn[0] >= 0 && a >= this.drawn[0] && b <= this.drawn[1] && roomAbove && roomBelow) return;
      first = Math.max(0, a - OVERSCAN);
      last = Math.min(count, b + OVERSCAN);
    } else if (!force && this.drawn[0] === 0 && this.drawn[1] === count) {
      return;
    }
    // lines still in the window keep their elements (scrolling builds only the new ones)
    const t0 = performance.now();
    const pool = new Map();
    const frag = document.createDocumentFragment();
    for (let k = first; k < last; k++) {
      const i = this.view ? this.view[k] : k;
      const line = (!force && this.pool && this.pool.get(i)) || this.line(i);
      pool.set(i, line);
      frag.append(line);
    }
    this.pool = pool;
    this.win.replaceChildren(frag);
    this.win.style.transform = `translateY(${this.top(first)}px)`;
    this.drawn = [first, last];
    STORE.drawn += 1;
    STORE.drawMs = (STORE.drawMs || 0) + performance.now() - t0;
  }

  redraw() { this.drawn = [-1, -1]; this.draw(true); }

  line(i) {
    const d = this.d, text = d.lines[i], runs = d.tokens[i];
    const div = el("div", "l");
    let cls = "l";
    if (this.kinds[i]) cls += " " + this.kinds[i];
    if (this.hits && this.hits.has(i)) cls += " hit";
    if (this.sel.has(i)) cls += " sel";
    div.className = cls;
    div.dataset.line = String(i + 1);
    const py = d.py && d.py[i];
    if (py) { div.dataset.py = String(py); div.tabIndex = 0; }
    const calls = d.calls && d.calls[i + 1];      // inlined helper code: the lines that called it
    if (calls) div.dataset.from = div.title = "from line " + calls.join(" ← ");
    const heat = d.heat && d.heat[i + 1];         // a measured profile's share of samples
    if (heat) {
      if (!d.heatMax) d.heatMax = Math.max(...Object.values(d.heat));
      div.classList.add("heat");
      div.style.setProperty("--heat", String(heat / d.heatMax));
      div.dataset.heat = (100 * heat).toFixed(1) + " % of samples";
      div.title = (div.title ? div.title + " · " : "") + div.dataset.heat;
    }
    const mark = d.marks && d.marks[i + 1];       // why: remarks on this line
    if (mark) {
      div.classList.add("why");
      div.dataset.why = mark;
      div.title = (div.title ? div.title + " · " : "") + mark;
    }
    const regs = d.regs && d.regs[i + 1];         // the most live registers at this line's instructions
    if (regs) {
      if (!d.regsMax) d.regsMax = Math.max(...Object.values(d.regs));
      div.classList.add("regs");
      div.style.setProperty("--regs", String(regs / d.regsMax));
      div.dataset.regs = regs + " live registers";
      div.title = (div.title ? div.title + " · " : "") + div.dataset.regs;
    }
    const t = el("span", "t");
    let pos = 0, m;
    RUN.lastIndex = 0;
    while ((m = RUN.exec(runs)) !== null) {
      const len = Number(m[2]), piece = text.substr(pos, len);
      if (m[1] === "A") t.append(piece);
      else t.append(el("span", d.classes[CODES.indexOf(m[1])], piece));
      pos += len;
    }
    if (pos < text.length) t.append(text.slice(pos));
    div.append(t);
    return div;
  }

  // ---- where the panel opens (payload.py `opening`) --------------------------------------
  open() {
    // the launched function's first line at the top when its first global load then fits on
    // screen, else that load a third of the way down; a followed line wins (applySel)
    const o = (this.d && this.d.open) || {};
    if (this.view || !this.rowH) return;
    const s = o.start ? o.start - 1 : -1, l = o.load ? o.load - 1 : -1;
    if (s < 0 && l < 0) return;
    if (s >= 0 && (l < 0 || (l >= s && this.top(l + 1) - this.top(s) <= this.scroll.clientHeight))) {
      this.scroll.scrollTop = this.top(s);
      this.saved = [this.scroll.scrollTop, this.scroll.scrollLeft];
      this.draw();
      this.root.dataset.opened = "start";
    } else {
      this.reveal(l, 1 / 3);
      this.root.dataset.opened = "load";
    }
    this.openedAt = this.scroll.scrollTop;
  }

  atOpening() {
    return this.d && !this.sel.size && this.openedAt !== undefined && this.scroll.scrollTop === this.openedAt;
  }

  jumpToLoad() {
    const o = (this.d && this.d.open) || {};
    if (!o.load) return;
    if (this.view) { this.onlyBox.checked = false; this.setOnly(false); }
    this.reveal(o.load - 1, 1 / 3);
    const line = this.win.querySelector(`.l[data-line="${o.load}"]`);
    if (line) { line.classList.add("jump"); setTimeout(() => line.classList.remove("jump"), 1200); }
  }

  // ---- following a Python line -----------------------------------------------------------
  onLine(ev) {
    const line = ev.target.closest && ev.target.closest(".l");
    if (!line || !line.dataset.py) return;
    const py = Number(line.dataset.py);
    follow(py, this);
    // a state value, new at every click (its time): a trigger value can be dropped when the click
    // lands while a run_every fragment reruns (Streamlit 1.67); a state value is kept
    if (this.setState) this.setState("follow", [py, Date.now()]);
  }

  applySel(py, scroll) {
    this.sel = new Set();
    let first = -1;
    if (py && this.d && this.d.py) {
      const map = this.d.py, calls = this.d.calls || {};
      for (let i = 0; i < map.length; i++) {
        // its own line, or a call site of the helper it is in: what the call made
        if (map[i] === py || (calls[i + 1] && calls[i + 1].includes(py))) {
          this.sel.add(i);
          if (first < 0) first = i;
        }
      }
    }
    this.root.toggleAttribute("data-following", this.sel.size > 0);
    if (!this.rowH) return;
    this.redraw();
    if (scroll && first >= 0) this.reveal(first, 1 / 3);
  }

  reveal(i, at) {
    let k = i;
    if (this.view) { k = this.view.indexOf(i); if (k < 0) return; }
    this.scroll.scrollTop = Math.max(0, this.top(k) - this.scroll.clientHeight * at);
    this.saved = [this.scroll.scrollTop, this.scroll.scrollLeft];
    this.draw();
  }

  // ---- search --------------------------------------------------------------------------
  find(q, from) {
    this.query = q.toLowerCase();
    if (!this.query) {
      this.hits = null; this.hitList = []; this.count.hidden = true;
    } else {
      if (!this.lower) this.lower = this.d.lines.map((l) => l.toLowerCase());
      this.hitList = [];
      for (let i = 0; i < this.lower.length; i++) if (this.lower[i].includes(this.query)) this.hitList.push(i);
      this.hits = new Set(this.hitList);
      this.count.hidden = false;
      this.count.textContent = `${this.hitList.length} matching line${this.hitList.length === 1 ? "" : "s"}`;
    }
    this.hitAt = -1;
    if (this.onlyBox.checked) { this.setOnly(true); return; }
    this.redraw();
    if (from >= 0 && this.hitList.length) this.next(1);
  }

  next(dir) {
    if (!this.hitList.length) return;
    this.hitAt = (this.hitAt + dir + this.hitList.length) % this.hitList.length;
    this.reveal(this.hitList[this.hitAt], 1 / 3);
  }

  setOnly(on) {
    this.view = on && this.hits ? this.hitList : null;
    this.scroll.scrollTop = 0;
    this.layout();
  }

  setWrap(on, save = true) {
    this.wrap = on;
    this.root.classList.toggle("wrap", on);
    this.wrapBtn.setAttribute("aria-pressed", String(on));
    if (save && this.d) localStorage.setItem("tlens-wrap-" + this.d.stage, on ? "1" : "0");
    if (save) this.layout();
  }

  download() {
    const d = this.d;
    if (!d) return;
    const blob = new Blob([d.lines.join("\n") + (d.final_newline ? "\n" : "")], { type: "text/plain" });
    const a = el("a");
    a.href = URL.createObjectURL(blob);
    a.download = d.file;
    this.root.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }
}

function live() {
  // a panel is out of the page for a moment while Streamlit moves it: skip it, keep it
  return [...STORE.panels].filter((p) => p.root.isConnected);
}

function follow(py, origin) {
  // from the page state (origin null): only a change; from a click: again (scrolls the others back)
  if (py === STORE.py && !origin) return;
  STORE.py = py;
  for (const p of live()) p.applySel(py, p !== origin);
}

function setZoom(z) {
  STORE.zoom = Math.max(0.6, Math.min(2.5, z));
  localStorage.setItem("tlens-zoom", String(STORE.zoom));
  for (const p of live()) p.layout();
}

let fitTimer = 0;
function refitAll() {
  // content above a panel grew or shrank (an expander opened, the editor loaded)
  clearTimeout(fitTimer);
  fitTimer = setTimeout(() => {
    for (const p of live()) {
      if (!p.rowH) continue;
      const reopen = p.atOpening();           // still where it opened: open again for the new height
      p.fit();
      if (reopen) p.open();
    }
  }, 50);
}
if (!STORE.watching) {
  STORE.watching = true;
  window.addEventListener("resize", refitAll);
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (main) new ResizeObserver(refitAll).observe(main);
}

const instances = new WeakMap();

// called by page.js with {follow, present}
STORE.setPage = function (data) {
  const present = Boolean(data.present);
  if (present !== STORE.present) {
    STORE.present = present;
    for (const p of live()) p.layout();
  }
  const py = data.follow || null;
  if (py !== STORE.py) follow(py, null);
};
if (STORE.page) STORE.setPage(STORE.page);     // page.js ran first

export default function (component) {
  const { data, parentElement } = component;
  STORE.invoked += 1;
  let panel = instances.get(parentElement);
  if (!panel) {
    panel = new Panel(parentElement);
    instances.set(parentElement, panel);
  }
  panel.setState = component.setStateValue;
  if (data) panel.load(data);
  return () => {       // unmounted or about to get new data: forget it if it stays out of the page
    setTimeout(() => { if (!panel.root.isConnected) STORE.panels.delete(panel); }, 5000);
  };
}
