import type { Computer } from '../../shared/computers.js';

type Connection = { baseUrl: string; apiKey: string };
const { connection } = (window as unknown as { benchtop: { connection: Connection } }).benchtop;

async function refresh(): Promise<void> {
  const status = document.getElementById('status')!;
  const list = document.getElementById('computers')!;
  try {
    const response = await fetch(`${connection.baseUrl}/computers`, {
      headers: { Authorization: `Bearer ${connection.apiKey}` },
    });
    const computers = (await response.json()) as Computer[];
    status.textContent = `serving at ${connection.baseUrl} · ${computers.length} running`;
    list.replaceChildren(
      ...computers.map((computer) => {
        const item = document.createElement('li');
        item.textContent = `${computer.id} · ${computer.kind} · ${computer.display.width}×${computer.display.height}`;
        return item;
      }),
    );
  } catch (error) {
    status.textContent = `cannot reach the server: ${String(error)}`;
  }
}

void refresh();
setInterval(() => void refresh(), 2000);
