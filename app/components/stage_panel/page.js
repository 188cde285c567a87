// Triton Lens page state for the stage panels: the followed Python line and presentation
// mode, data {follow, present}. Kept apart from panel.js so that a rerun that changes them
// sends a few hundred bytes; panel.js applies them (now, or when it loads).
export default function ({ data }) {
  const store = window.__tlensStage || (window.__tlensStage = {});
  store.page = data;
  if (store.setPage) store.setPage(data);
}
