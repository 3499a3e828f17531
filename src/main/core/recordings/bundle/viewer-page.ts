import type { Task } from '../../../../shared/tasks.js';
import type { TimelineEntry } from './timeline.js';
import { VIEWER_SCRIPT } from './viewer-script.js';

/** A file of the bundle the viewer links to, with what it is. */
export type ViewerFile = { name: string; label: string };

/** Everything the viewer shows, embedded in index.html as JSON. */
export type ViewerData = {
  title: string;
  task: Task;
  /** The video's file in the bundle, or null without one. */
  video: string | null;
  files: ViewerFile[];
  entries: TimelineEntry[];
};

/**
 * Nothing may come from the network: images and the video only from the bundle's own folder
 * (`'self'` of a file:// page is its folder's files in Chromium), style and script only inline.
 */
export const VIEWER_CSP =
  "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'";

/**
 * index.html of a task bundle: one self-contained page (inline style and script, the data as JSON)
 * that opens from the unzipped folder with no server and no network.
 */
export function viewerPage(data: ViewerData): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${VIEWER_CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(data.title)} · Benchtop task ${escapeHtml(data.task.task_id)}</title>
<style>${STYLE}</style>
</head>
<body>
<header class="top">
<h1 id="title"></h1>
<span id="status" class="status"></span>
<span class="muted">Benchtop task ${escapeHtml(data.task.task_id)}</span>
<nav id="files" class="files" aria-label="Files of the bundle"></nav>
</header>
<main class="layout">
<aside class="side">
<section id="summary"></section>
<section id="player"></section>
</aside>
<ol id="timeline" class="timeline" aria-label="Timeline"></ol>
</main>
<script type="application/json" id="bundle-data">${embedJson(data)}</script>
<script>${VIEWER_SCRIPT}</script>
</body>
</html>
`;
}

/**
 * JSON safe inside a <script> element: every `<` escaped, so no `</script>` (nor `<!--`, which
 * would change how the page's parser reads the rest) can appear in it.
 */
export function embedJson(value: unknown): string {
  return JSON.stringify(value)
    .replaceAll('<', '\\u003c')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029');
}

function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

/** The window's look (src/renderer/src/styles.css), trimmed to what the viewer uses. */
const STYLE = `
:root {
  --bg: #f6f7f9; --panel: #fff; --text: #1d2330; --muted: #5d6675; --line: #d9dde4;
  --accent: #2457d6; --danger: #b42318; --ok: #15803d; --warn: #a15c07; --radius: 6px;
  --mark: #ff2d55;
  color-scheme: light dark;
  font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif;
  color: var(--text);
  background: var(--bg);
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #15181e; --panel: #1e222a; --text: #e6e8ec; --muted: #9aa3b2; --line: #343a46;
    --accent: #7aa2ff; --danger: #ff7b72; --ok: #4ade80; --warn: #f0b45a;
  }
}
* { box-sizing: border-box; }
body { margin: 0; }
h1 { font-size: 18px; margin: 0; overflow-wrap: anywhere; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 16px 0 6px; }
h3 { font-size: 14px; margin: 0; }
a { color: var(--accent); }
.muted { color: var(--muted); font-size: 12px; }
.top {
  display: flex; align-items: baseline; gap: 12px; flex-wrap: wrap;
  padding: 12px 16px; background: var(--panel); border-bottom: 1px solid var(--line);
}
.status { font-size: 12px; font-weight: 600; border-radius: 8px; padding: 1px 8px; border: 1px solid currentColor; }
.status-completed { color: var(--ok); }
.status-failed, .status-cancelled { color: var(--danger); }
.status-max_steps, .status-paused, .status-running { color: var(--warn); }
.layout { display: grid; grid-template-columns: minmax(320px, 34%) 1fr; gap: 16px; padding: 0 16px 16px; }
.side { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow: auto; padding-bottom: 16px; }
.instruction { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; max-height: 12em; overflow: auto; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 10px 0 0; }
dl > div { display: contents; }
dt { color: var(--muted); }
dd { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
dl .ok dd { color: var(--ok); }
dl .danger dd { color: var(--danger); }
video { display: block; width: 100%; background: #000; border-radius: var(--radius); }
.files { flex-basis: 100%; display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; color: var(--muted); }
.files a { font-family: ui-monospace, monospace; }
.timeline { list-style: none; padding: 0; margin: 16px 0 0; display: flex; flex-direction: column; gap: 10px; }
.entry { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); padding: 10px; }
.entry-step { display: grid; grid-template-columns: minmax(220px, 42%) 1fr; gap: 14px; }
.entry.seekable { cursor: pointer; }
.entry.seekable:hover { border-color: var(--accent); }
.entry.current { border-color: var(--accent); box-shadow: 0 0 0 2px var(--accent); }
.entry-person { border-style: dashed; }
.person { font-weight: 600; color: var(--warn); }
.entry-head { display: flex; align-items: baseline; gap: 10px; flex-wrap: wrap; margin-bottom: 4px; }
.when { margin-left: auto; color: var(--muted); font-size: 12px; font-variant-numeric: tabular-nums; }
.seek {
  font: inherit; font-size: 12px; color: var(--accent); background: none; cursor: pointer;
  border: 1px solid var(--line); border-radius: var(--radius); padding: 0 6px;
}
.shot { position: relative; display: block; align-self: start; border: 1px solid var(--line); background: var(--line); }
.shot img { display: block; width: 100%; height: auto; }
.shot-empty {
  min-height: 60px; display: flex; align-items: center; justify-content: center;
  color: var(--muted); font-size: 12px; padding: 8px; text-align: center;
}
.shot-marks { position: absolute; inset: 0; width: 100%; height: 100%; pointer-events: none; }
.mark-ring { fill: none; stroke: var(--mark); }
.mark-line { stroke: var(--mark); stroke-dasharray: 6 4; }
.mark-dot { fill: var(--mark); }
.shot-caption {
  position: absolute; left: 6px; bottom: 6px; max-width: calc(100% - 12px);
  background: #000c; color: #fff; font-size: 12px; padding: 2px 6px; border-radius: 4px;
  overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
}
.events { list-style: none; padding: 0; margin: 0; }
.event { padding: 2px 0; display: flex; gap: 6px; align-items: baseline; }
.event-kind { flex: none; width: 100px; font-size: 12px; font-weight: 600; color: var(--muted); }
.event-text { white-space: pre-wrap; overflow-wrap: anywhere; min-width: 0; }
.event-reasoning .event-text { color: var(--muted); font-style: italic; }
.event-user_message .event-kind, .event-paused .event-kind, .event-resumed .event-kind { color: var(--warn); }
.event-approval_required .event-kind, .event-handoff_requested .event-kind, .event-stalled .event-kind, .event-model_retry .event-kind, .event-budget_reached .event-kind { color: var(--warn); }
.event-completed .event-kind { color: var(--ok); }
.event-failed .event-kind, .event-cancelled .event-kind { color: var(--danger); }
.result { flex: none; font-size: 12px; }
.result-ok { color: var(--ok); }
.result-error { color: var(--danger); }
.model-links { margin: 6px 0 0; display: flex; gap: 12px; font-size: 12px; }
@media (max-width: 900px) {
  .layout { grid-template-columns: 1fr; }
  .side { position: static; max-height: none; }
  .entry-step { grid-template-columns: 1fr; }
}
`;
