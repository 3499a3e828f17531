import { contextBridge } from 'electron';

/** The renderer gets the server's URL and its key, nothing else: it talks only HTTP. */
function argument(name: string): string {
  const prefix = `--${name}=`;
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length) ?? '';
}

contextBridge.exposeInMainWorld('benchtop', {
  connection: { baseUrl: argument('benchtop-base-url'), apiKey: argument('benchtop-key') },
  platform: process.platform,
});
