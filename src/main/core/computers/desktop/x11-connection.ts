/**
 * A connection of our own to an X display through node-x11 (pure JavaScript, no libX11), typed by
 * the little of it the desktop worker uses: the window manager round trip and the screen's damage.
 */
import { createRequire } from 'node:module';

export type X11Event = { name: string; wid: number; atom: number };

export type X11Client = {
  AllocID(): number;
  InternAtom(
    onlyIfExists: boolean,
    name: string,
    cb: (error: Error | null, atom: number) => void,
  ): void;
  CreateWindow(...args: unknown[]): void;
  DestroyWindow(window: number): void;
  SendClientMessage(
    destination: number,
    window: number,
    type: number,
    format: number,
    data: number[],
  ): void;
  GetInputFocus(cb: (error: Error | null) => void): void;
  /** Loads an extension's requests and events (`damage`, …). */
  require<E>(name: string, cb: (error: Error | null, extension: E) => void): void;
  on(event: 'event', listener: (event: X11Event) => void): void;
  on(event: 'error', listener: (error: unknown) => void): void;
  removeListener(event: 'event', listener: (event: X11Event) => void): void;
};

export type X11Connection = {
  client: X11Client;
  root: number;
  eventMask: { PropertyChange: number };
};

type X11Module = {
  createClient(
    options: { display: string },
    cb: (error: Error | null, display: { client: X11Client; screen: { root: number }[] }) => void,
  ): { on(event: 'error', listener: (error: Error) => void): void };
  eventMask: { PropertyChange: number };
};

/** Connects to `display` (XAUTHORITY from the environment). */
export async function connectX11(display: string): Promise<X11Connection> {
  // node-x11 is CommonJS without types: required here, typed above.
  const x11 = createRequire(import.meta.url)('x11') as X11Module;
  return new Promise<X11Connection>((resolve, reject) => {
    const connecting = x11.createClient({ display }, (error, connected) =>
      error
        ? reject(error)
        : resolve({
            client: connected.client,
            root: connected.screen[0]!.root,
            eventMask: x11.eventMask,
          }),
    );
    connecting.on('error', reject);
  });
}
