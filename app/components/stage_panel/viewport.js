// Triton Lens: the browser window's width, for the page's choice of how many panels open
// (two below ~1500 px). data {width}: the width Python knows (null at first). Reports on
// mount when Python does not know it yet, and after a resize that changes it by 50 px or more.
const STORE = window.__tlensViewport || (window.__tlensViewport = { known: null, set: null });

function report() {
  const w = Math.round(window.innerWidth);
  if (STORE.set && (STORE.known === null || Math.abs(w - STORE.known) >= 50)) {
    STORE.known = w;
    STORE.set("width", w);
  }
}

if (!STORE.listening) {
  STORE.listening = true;
  let timer = 0;
  window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(report, 300); });
}

export default function ({ data, setStateValue }) {
  STORE.set = setStateValue;
  STORE.known = data && data.width ? data.width : null;
  report();
}
