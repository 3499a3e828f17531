// Drives a Benchtop computer over its WebSocket, /computers/{id}/ws (docs/API.md §7): actions go
// out with an id of ours, answers and the computer's events come back on the same connection.
// LIGHTCONE_BASE_URL=http://127.0.0.1:4422 TZAFON_API_KEY=sk_… node examples/websocket/actions.mjs
import WebSocket from 'ws';

const base = process.env.LIGHTCONE_BASE_URL ?? 'http://127.0.0.1:4422';
const key = process.env.TZAFON_API_KEY;
if (!key) throw new Error('set TZAFON_API_KEY to a Benchtop key (benchtop keys create)');
const authorization = `Bearer ${key}`;

const created = await fetch(`${base}/computers`, {
  method: 'POST',
  headers: { authorization, 'content-type': 'application/json' },
  body: '{}',
});
if (!created.ok) throw new Error(`POST /computers: ${created.status} ${await created.text()}`);
const computer = await created.json();

const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/computers/${computer.id}/ws`, {
  headers: { authorization },
});
const answers = new Map();
let events = 0;
ws.on('message', (data) => {
  const message = JSON.parse(data.toString());
  if (message.id !== undefined) answers.get(message.id)?.(message);
  else if (message.type === 'error') console.error(`refused: ${message.message}`);
  else events += 1;
});
await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));

let sent = 0;
/** Sends one action and waits for its answer. */
function act(action) {
  const id = ++sent;
  return new Promise((resolve) => {
    answers.set(id, resolve);
    ws.send(JSON.stringify({ id, action }));
  });
}

const page =
  '<h1 id="out">not clicked</h1><button style="font-size:40px" onclick="out.textContent = `clicked over the WebSocket`">Go</button>';
await act({ type: 'navigate', url: `data:text/html,${encodeURIComponent(page)}` });
const click = await act({ type: 'click', x: 40, y: 100 });
console.log(`click: ${click.status}`);
const html = await act({ type: 'get_html_content' });
console.log(`page says: ${/<h1 id="out">([^<]*)/.exec(html.result.html_content)?.[1]}`);

const closed = new Promise((resolve) => ws.once('close', resolve));
await fetch(`${base}/computers/${computer.id}`, { method: 'DELETE', headers: { authorization } });
// The computer's final status event comes last, then the socket closes.
console.log(`socket closed with ${await closed} after ${events} events`);
