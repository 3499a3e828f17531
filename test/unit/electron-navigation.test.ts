import { describe, expect, it } from 'vitest';
import { navigationGuard } from '../../src/main/window/navigation-guard.js';

const server = 'http://127.0.0.1:4422';

function setup(origins = [server]) {
  const opened: string[] = [];
  const guard = navigationGuard(origins, (url) => opened.push(url));
  const navigate = (handler: 'onNavigate' | 'onRedirect', url: string) => {
    let prevented = false;
    guard[handler]({ url, preventDefault: () => (prevented = true) });
    return prevented ? 'blocked' : 'allowed';
  };
  const permission = (name: string, requestingUrl: string) => {
    let granted: boolean | undefined;
    guard.onPermission(undefined, name, (value) => (granted = value), { requestingUrl });
    return granted;
  };
  return { guard, opened, navigate, permission };
}

describe('the navigation guard', () => {
  it("lets the window move within the server's origin", () => {
    const { navigate, opened } = setup();
    expect(navigate('onNavigate', `${server}/ui/#/tasks`)).toBe('allowed');
    expect(navigate('onNavigate', `${server}/ui/index.html?x=1`)).toBe('allowed');
    expect(navigate('onRedirect', `${server}/ui/`)).toBe('allowed');
    expect(opened).toEqual([]);
  });

  it('keeps the window on the server: other web pages open in the system browser', () => {
    const { navigate, opened } = setup();
    expect(navigate('onNavigate', 'https://docs.tzafon.ai/')).toBe('blocked');
    // Same host, other port: another origin (another local service).
    expect(navigate('onNavigate', 'http://127.0.0.1:8080/')).toBe('blocked');
    expect(navigate('onNavigate', 'http://localhost:4422/ui/')).toBe('blocked');
    expect(opened).toEqual([
      'https://docs.tzafon.ai/',
      'http://127.0.0.1:8080/',
      'http://localhost:4422/ui/',
    ]);
  });

  it('opens nothing for schemes that could start local programs', () => {
    const { navigate, guard, opened } = setup();
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'vscode://x', 'not a url']) {
      expect(navigate('onNavigate', url)).toBe('blocked');
      expect(guard.onWindowOpen({ url })).toEqual({ action: 'deny' });
    }
    expect(opened).toEqual([]);
  });

  it('never opens a second Electron window: http(s) links go to the system browser', () => {
    const { guard, opened } = setup();
    expect(guard.onWindowOpen({ url: 'https://example.com/page' })).toEqual({ action: 'deny' });
    expect(guard.onWindowOpen({ url: `${server}/ui/` })).toEqual({ action: 'deny' });
    expect(opened).toEqual(['https://example.com/page', `${server}/ui/`]);
  });

  it('blocks a redirect away from the server without opening it', () => {
    const { navigate, opened } = setup();
    expect(navigate('onRedirect', 'https://elsewhere.example/')).toBe('blocked');
    expect(opened).toEqual([]);
  });

  it('under npm run dev also allows the dev server', () => {
    const { navigate } = setup([server, 'http://localhost:5173']);
    expect(navigate('onNavigate', 'http://localhost:5173/#/settings')).toBe('allowed');
  });

  it('grants our pages the clipboard and full screen, and nothing else', () => {
    const { permission } = setup();
    expect(permission('clipboard-sanitized-write', `${server}/ui/`)).toBe(true);
    expect(permission('fullscreen', `${server}/ui/`)).toBe(true);
    for (const name of ['media', 'geolocation', 'notifications', 'openExternal', 'clipboard-read'])
      expect(permission(name, `${server}/ui/`)).toBe(false);
    expect(permission('clipboard-sanitized-write', 'https://evil.example/')).toBe(false);
  });
});
