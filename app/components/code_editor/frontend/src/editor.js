// The kernel-file editor: CodeMirror 6 mounted by Streamlit's components v2.
//
// Python (app/components/code_editor/__init__.py) sends `data`:
//   {id, rev, doc, label, hint, height, wrap, errorLine, errorMessage}
// `rev` names the document Python last put in the editor. A new rev replaces the text (another
// file was opened); the same rev never does, so a rerun that arrives while the user types
// cannot undo keystrokes. The editor sends back, as the state value "value" (debounced 300 ms,
// and at once on blur, on Ctrl/Cmd-Enter and when the page hides):
//   {text, rev, sid, seq}
// and as the trigger "compile" the same payload when Ctrl/Cmd-Enter is pressed.
import { EditorState, StateEffect, StateField, RangeSet, Compartment } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
  highlightSpecialChars, gutter, GutterMarker, Decoration, WidgetType,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { bracketMatching, indentOnInput, indentUnit, syntaxHighlighting, HighlightStyle } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { search, searchKeymap, highlightSelectionMatches } from "@codemirror/search";
import { tags as t } from "@lezer/highlight";

const DEBOUNCE_MS = 300;
// One id per page load: Python tells a report of this page from one of an earlier load.
const SID = Math.random().toString(36).slice(2, 10);

// Per editor id: {rev, text, sent, seq}, the newest text of document `rev`, the text last sent
// to Python and the number of the last report. The module lives as long as the page, so an
// editor that React mounts again comes back with what was typed, not with the text Python last
// sent, and does not send again what Python already has.
const drafts = new Map();

// While the script runs (a compile can take seconds), typing does not start a new run: Streamlit
// would stop the running one (runner.fastReruns) and run the page again beside it. The text
// waits until the run is over; blur, Ctrl/Cmd-Enter and leaving the page send it at once. The
// run state is read from the attribute Streamlit's app root carries (data-test-script-state:
// "running", "rerunRequested", "notRunning", ...); without it nothing waits.
function scriptBusy() {
  const app = document.querySelector("[data-test-script-state]");
  const state = app && app.getAttribute("data-test-script-state");
  return state === "running" || state === "rerunRequested";
}
const BUSY_POLL_MS = 200;

// Typed text also goes to the tab's sessionStorage, with the text it was typed on (`base`, the
// last text sent before it). A reload inside the debounce loses the websocket message but not
// this: the reloaded editor takes the stored text back when Python hands it that same base (the
// saved file, so the newer text never arrived), and sends it.
const storage = (() => { try { return window.sessionStorage; } catch (e) { return null; } })();
function storeKey(id) { return `triton-lens-editor:${id}`; }
function stored(id) {
  try { return JSON.parse(storage.getItem(storeKey(id))); } catch (e) { return null; }
}
function store(id, draft) {
  if (!storage) return;
  try {
    if (draft.text === draft.sent) storage.removeItem(storeKey(id));
    else storage.setItem(storeKey(id), JSON.stringify({ base: draft.sent, text: draft.text }));
  } catch (e) { /* full or denied: the websocket path still works */ }
}
// parentElement -> the live editor: the component function runs again whenever `data`
// changes, and the same editor (its undo history, cursor, scroll) must carry on.
const editors = new WeakMap();

// ---- the error line: a gutter marker, a tinted line and the message under it -------------
const setError = StateEffect.define();

class ErrorMarker extends GutterMarker {
  constructor(message) { super(); this.message = message; }
  eq(other) { return other.message === this.message; }
  toDOM() {
    const el = document.createElement("span");
    el.className = "tl-error-marker";
    el.textContent = "●";
    el.title = this.message;
    el.setAttribute("aria-label", `Error: ${this.message}`);
    return el;
  }
}

class ErrorMessage extends WidgetType {
  constructor(line, message) { super(); this.line = line; this.message = message; }
  eq(other) { return other.message === this.message && other.line === this.line; }
  toDOM() {
    const el = document.createElement("div");
    el.className = "tl-error-message";
    el.setAttribute("role", "alert");
    el.textContent = this.message;
    return el;
  }
  ignoreEvent() { return false; }
}

// {pos, message, line} or null; pos follows edits made after the compile.
const errorField = StateField.define({
  create: () => null,
  update(value, tr) {
    for (const e of tr.effects) if (e.is(setError)) return e.value;
    if (value && tr.docChanged) return { ...value, pos: tr.changes.mapPos(value.pos, -1) };
    return value;
  },
  provide: (field) => EditorView.decorations.from(field, (value) => {
    if (!value) return Decoration.none;
    return Decoration.set([
      Decoration.line({ class: "tl-error-line" }).range(value.pos),
    ]);
  }),
});

// the message under the error line: a block widget, so it comes from a state field too
const errorWidgetField = StateField.define({
  create: () => Decoration.none,
  update(_value, tr) {
    const err = tr.state.field(errorField);
    if (!err) return Decoration.none;
    const line = tr.state.doc.lineAt(err.pos);
    return Decoration.set([Decoration.widget({ widget: new ErrorMessage(err.line, err.message), block: true, side: 1 })
      .range(line.to)]);
  },
  provide: (field) => EditorView.decorations.from(field),
});

const errorGutter = gutter({
  class: "tl-error-gutter",
  markers: (view) => {
    const err = view.state.field(errorField);
    return err ? RangeSet.of([new ErrorMarker(err.message).range(view.state.doc.lineAt(err.pos).from)]) : RangeSet.empty;
  },
  initialSpacer: () => new ErrorMarker(""),
});

function errorEffect(state, line, message) {
  if (!line || line < 1 || line > state.doc.lines) return setError.of(null);
  return setError.of({ pos: state.doc.line(line).from, line, message: message || "error" });
}

// ---- colours: Streamlit's theme variables, so a dark theme gets its own readable shades ------
const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword, t.operatorKeyword, t.self],
    color: "var(--st-violet-text-color, #7c3aed)" },
  { tag: [t.string, t.special(t.string)], color: "var(--st-green-text-color, #15803d)" },
  { tag: [t.number, t.bool, t.null], color: "var(--st-orange-text-color, #c2410c)" },
  { tag: [t.comment, t.lineComment], color: "var(--st-gray-text-color, #6b7280)", fontStyle: "italic" },
  { tag: [t.function(t.definition(t.variableName)), t.function(t.variableName), t.function(t.propertyName)],
    color: "var(--st-blue-text-color, #1d4ed8)" },
  { tag: [t.definition(t.className), t.className], color: "var(--st-blue-text-color, #1d4ed8)", fontWeight: "600" },
  { tag: t.meta, color: "var(--st-red-text-color, #b91c1c)" },     // decorators: @triton.jit
  { tag: t.invalid, color: "var(--st-red-text-color, #b91c1c)" },
]);

const chrome = EditorView.theme({
  "&": {
    height: "100%",
    fontSize: "max(14px, 0.875rem)",
    color: "var(--st-text-color)",
    backgroundColor: "var(--st-background-color)",
  },
  "&.cm-focused": { outline: "none" },
  ".cm-scroller": {
    fontFamily: "var(--st-code-font, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace)",
    lineHeight: "1.5",
  },
  ".cm-content": { caretColor: "var(--st-text-color)" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--st-text-color)", borderLeftWidth: "2px" },
  ".cm-gutters": {
    backgroundColor: "var(--st-secondary-background-color)",
    color: "var(--st-gray-text-color, #6b7280)",
    borderRight: "1px solid var(--st-border-color, rgba(128,128,128,.3))",
  },
  ".cm-lineNumbers .cm-gutterElement": { padding: "0 8px 0 10px", minWidth: "2.5em" },
  // neutral tints: the theme's primary colour is red by default, and red means "error" here
  ".cm-activeLine": { backgroundColor: "color-mix(in srgb, var(--st-text-color) 5%, transparent)" },
  ".cm-activeLineGutter": {
    backgroundColor: "color-mix(in srgb, var(--st-text-color) 10%, transparent)",
    color: "var(--st-text-color)",
  },
  "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, ::selection": {
    backgroundColor: "color-mix(in srgb, var(--st-blue-color, #2563eb) 28%, transparent) !important",
  },
  "&.cm-focused .cm-matchingBracket": {
    backgroundColor: "color-mix(in srgb, var(--st-green-color, #16a34a) 30%, transparent)",
    outline: "1px solid var(--st-green-color, #16a34a)",
  },
  "&.cm-focused .cm-nonmatchingBracket": {
    backgroundColor: "color-mix(in srgb, var(--st-red-color, #dc2626) 30%, transparent)",
  },
  ".cm-searchMatch": {
    backgroundColor: "color-mix(in srgb, var(--st-yellow-color, #facc15) 40%, transparent)",
    outline: "1px solid var(--st-yellow-color, #ca8a04)",
  },
  ".cm-searchMatch.cm-searchMatch-selected": {
    backgroundColor: "color-mix(in srgb, var(--st-orange-color, #f97316) 45%, transparent)",
  },
  ".cm-selectionMatch": { backgroundColor: "color-mix(in srgb, var(--st-blue-color, #2563eb) 14%, transparent)" },
  ".cm-panels": {
    backgroundColor: "var(--st-secondary-background-color)",
    color: "var(--st-text-color)",
    fontSize: "14px",
  },
  ".cm-panels.cm-panels-top": { borderBottom: "1px solid var(--st-border-color, rgba(128,128,128,.3))" },
  ".cm-panel.cm-search": { padding: "6px 8px" },
  ".cm-panel.cm-search input, .cm-panel.cm-search button, .cm-panel.cm-search label": { fontSize: "14px" },
  ".cm-textfield": {
    backgroundColor: "var(--st-background-color)",
    color: "var(--st-text-color)",
    border: "1px solid var(--st-border-color, rgba(128,128,128,.5))",
    borderRadius: "4px",
  },
  ".cm-button": {
    backgroundImage: "none",
    backgroundColor: "var(--st-background-color)",
    color: "var(--st-text-color)",
    border: "1px solid var(--st-border-color, rgba(128,128,128,.5))",
    borderRadius: "4px",
  },
  ".tl-error-gutter .cm-gutterElement": { padding: "0 2px 0 4px" },
  ".tl-error-marker": { color: "var(--st-red-color, #dc2626)", cursor: "help", fontSize: "12px" },
  ".tl-error-line": { backgroundColor: "color-mix(in srgb, var(--st-red-color, #dc2626) 14%, transparent)" },
  ".tl-error-message": {
    fontFamily: "var(--st-font, sans-serif)",
    fontSize: "max(14px, 0.875rem)",
    padding: "2px 10px",
    margin: "1px 0 3px",
    borderLeft: "3px solid var(--st-red-color, #dc2626)",
    color: "var(--st-red-text-color, #b91c1c)",
    backgroundColor: "color-mix(in srgb, var(--st-red-color, #dc2626) 8%, transparent)",
    whiteSpace: "pre-wrap",
  },
});

// ---- one editor ------------------------------------------------------------------------------
class Editor {
  constructor(root, data) {
    this.api = null;
    this.rev = data.rev;
    this.id = data.id;
    this.timer = null;
    this.errorKey = null;
    this.aria = new Compartment();
    this.wrapping = new Compartment();
    this.wrap = !!data.wrap;
    this.label = data.label || "";

    this.frame = document.createElement("div");
    this.frame.className = "tl-editor";
    this.header = document.createElement("div");
    this.header.className = "tl-editor-header";
    this.title = document.createElement("span");
    this.title.className = "tl-editor-label";
    this.hint = document.createElement("span");
    this.hint.className = "tl-editor-hint";
    this.header.append(this.title, this.hint);
    this.host = document.createElement("div");
    this.host.className = "tl-editor-host";
    this.frame.append(this.header, this.host);
    // for tests and scripts: the whole text (CodeMirror draws only the lines in view)
    this.frame.tlensText = () => this.text();
    root.appendChild(this.frame);
    // Streamlit's page-wide shortcuts (r = rerun, c = clear cache) listen on the document; a key
    // typed here is the editor's, so it goes no further.
    for (const type of ["keydown", "keypress", "keyup"]) this.frame.addEventListener(type, (e) => e.stopPropagation());

    let draft = drafts.get(this.id);
    if (!draft || draft.rev !== data.rev) {
      draft = { rev: data.rev, text: data.doc, sent: data.doc, seq: draft ? draft.seq : 0 };
      const kept = stored(this.id);
      if (kept && kept.base === data.doc && typeof kept.text === "string") draft.text = kept.text;
      drafts.set(this.id, draft);
    }
    this.view = new EditorView({ state: this.newState(draft.text), parent: this.host, root: root });
    this.onPageHide = () => {
      if (this.frame.isConnected) this.flush();
      else this.detach();
    };
    window.addEventListener("pagehide", this.onPageHide);
    document.addEventListener("visibilitychange", this.onPageHide);
    if (draft.text !== draft.sent) this.schedule(0);    // typed text Python has not seen yet
  }

  get draft() { return drafts.get(this.id); }

  newState(text) {
    const editor = this;
    return EditorState.create({
      doc: text,
      extensions: [
        errorGutter,
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        EditorState.allowMultipleSelections.of(true),
        indentOnInput(),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        python(),
        syntaxHighlighting(highlight),
        bracketMatching(),
        highlightActiveLine(),
        highlightSelectionMatches(),
        search({ top: true }),
        errorField,
        errorWidgetField,
        keymap.of([
          { key: "Mod-Enter", preventDefault: true, run: () => { editor.compile(); return true; } },
          ...searchKeymap,
          ...historyKeymap,
          indentWithTab,
          ...defaultKeymap,
        ]),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) editor.changed();
        }),
        EditorView.domEventHandlers({ blur: () => { editor.flush(); return false; } }),
        this.wrapping.of(this.wrap ? EditorView.lineWrapping : []),
        this.aria.of(EditorView.contentAttributes.of({ "aria-label": this.label || "Code editor" })),
        chrome,
      ],
    });
  }

  text() { return this.view.state.doc.toString(); }

  // the report of the current text; marks it sent
  payload() {
    const draft = this.draft;
    draft.seq += 1;
    draft.sent = draft.text;
    // the stored copy stays as it is: a message sent as the page unloads may never arrive, and
    // the next mount tells the two cases apart by the base
    return { text: draft.text, rev: this.rev, sid: SID, seq: draft.seq };
  }

  changed() {
    this.draft.text = this.text();
    store(this.id, this.draft);
    this.schedule(DEBOUNCE_MS);
  }

  schedule(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(false), ms);
  }

  // now = false: the debounced send, which waits while the script runs
  flush(now = true) {
    clearTimeout(this.timer);
    this.timer = null;
    if (!this.api || this.draft.text === this.draft.sent) return;
    if (!now && scriptBusy()) {
      this.timer = setTimeout(() => this.flush(false), BUSY_POLL_MS);
      return;
    }
    this.api.setStateValue("value", this.payload());
  }

  compile() {
    if (!this.api) return;
    clearTimeout(this.timer);
    const payload = this.payload();
    this.api.setStateValue("value", payload);
    this.api.setTriggerValue("compile", payload);
  }

  // Called on every run of the component function (mount, and each time `data` changes).
  apply(args) {
    const { data } = args;
    this.api = args;
    this.title.textContent = data.label || "";
    if (!!data.wrap !== this.wrap) {
      this.wrap = !!data.wrap;
      this.view.dispatch({ effects: this.wrapping.reconfigure(this.wrap ? EditorView.lineWrapping : []) });
    }
    if ((data.label || "") !== this.label) {
      this.label = data.label || "";
      this.view.dispatch({ effects: this.aria.reconfigure(
        EditorView.contentAttributes.of({ "aria-label": this.label || "Code editor" })) });
    }
    this.hint.textContent = data.hint || "";
    this.host.style.height = `${Math.max(120, data.height || 360)}px`;
    if (data.rev !== this.rev) {
      // Python opened another document: a fresh state (its own undo history), no error yet.
      clearTimeout(this.timer);
      const seq = this.draft ? this.draft.seq : 0;
      this.rev = data.rev;
      this.id = data.id;
      this.errorKey = null;
      drafts.set(this.id, { rev: data.rev, text: data.doc, sent: data.doc, seq });
      store(this.id, this.draft);
      this.view.setState(this.newState(data.doc));
    }
    this.frame.dataset.rev = this.rev;
    const key = JSON.stringify([data.rev, data.errorLine, data.errorMessage]);
    if (key !== this.errorKey) {
      this.errorKey = key;
      const effects = [errorEffect(this.view.state, data.errorLine, data.errorMessage)];
      const line = data.errorLine && data.errorLine <= this.view.state.doc.lines ? this.view.state.doc.line(data.errorLine) : null;
      if (line) effects.push(EditorView.scrollIntoView(line.from, { y: "center" }));
      this.view.dispatch({ effects });
    }
  }

  detach() {
    window.removeEventListener("pagehide", this.onPageHide);
    document.removeEventListener("visibilitychange", this.onPageHide);
  }
}

const CSS = `
.tl-editor { border: 1px solid var(--st-border-color, rgba(128,128,128,.35)); border-radius: var(--st-base-radius, 6px);
  overflow: hidden; background: var(--st-background-color); }
.tl-editor-header { display: flex; gap: 12px; justify-content: space-between; align-items: baseline;
  padding: 4px 10px; font-family: var(--st-font, sans-serif); font-size: max(14px, 0.875rem); color: var(--st-text-color);
  background: var(--st-secondary-background-color); border-bottom: 1px solid var(--st-border-color, rgba(128,128,128,.35)); }
.tl-editor-label { font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tl-editor-hint { color: var(--st-gray-text-color, #6b7280); white-space: nowrap; }
.tl-editor-host { position: relative; }
`;

export default function (args) {
  const root = args.parentElement;
  let editor = editors.get(root);
  if (!editor || !editor.frame.isConnected) {
    if (!root.querySelector("style[data-tl-editor]")) {
      const style = document.createElement("style");
      style.dataset.tlEditor = "";
      style.textContent = CSS;
      root.appendChild(style);
    }
    editor = new Editor(root, args.data);
    editors.set(root, editor);
  }
  editor.apply(args);
  // Streamlit calls this before it runs the function again with new data, and on unmount:
  // either way, what was typed goes to Python now.
  return () => {
    editor.flush();
    if (!editor.frame.isConnected) editors.delete(root);
  };
}
