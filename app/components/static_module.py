"""A components-v2 element's module as a small loader of a file in app/static/, instead of the
file's whole text in every element Streamlit sends.

Streamlit puts an element's `js` into each message that draws it: the code editor's bundle
and the stage panel's module went to the browser with every run of the page, and a class on
one Wi-Fi pays that for every click (the bytes of a Compile, before and after:
docs/09-benchmark-results.md#figures-behind-design-choices). With `server.enableStaticServing`
(.streamlit/config.toml) the browser fetches app/static/<name> once and caches it; the element
carries only `loader(name)`.

    _component = st.components.v2.component("tlens_stage_panel", js=loader("stage_panel.js"))
"""
from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parents[1] / "static"       # app/static/, served at app/static/

_LOADER = """
const url = new URL("app/static/%(name)s", document.baseURI).href;
let mod = null, loading = null;
export default function (component) {
  if (mod) return mod.default(component);
  let cleanup = null, gone = false;
  (loading ||= import(url)).then((m) => {
    mod = m;
    if (!gone) cleanup = m.default(component);
  }).catch((e) => {
    if (component.parentElement) component.parentElement.textContent = `%(what)s could not load (${url}): ${e}`;
  });
  return () => { gone = true; if (typeof cleanup === "function") cleanup(); };
}
"""


def loader(name: str, what: str) -> str:
    """The element's module: imports app/static/`name` once (a URL relative to the page, so a
    proxy's path prefix is kept) and calls its default export with the element, as Streamlit
    would have; a run replaced before the import resolves does nothing; a failed import says so
    in the element, naming `what`."""
    if not (STATIC / name).is_file():
        raise FileNotFoundError(STATIC / name)
    return _LOADER % {"name": name, "what": what}
