import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';

export default defineConfig({
  main: {
    build: {
      rollupOptions: {
        input: {
          index: 'src/main/index.ts',
          // `npx benchtop` (bin/benchtop.js) and `npm start`/`npm run serve` (bin/start.js).
          cli: 'src/main/cli.ts',
          launcher: 'src/main/launcher/start.ts',
          // Forked per desktop computer (nut-js binds to one X display per process).
          'desktop-worker': 'src/main/core/computers/desktop/desktop-worker.ts',
        },
      },
    },
  },
  preload: {
    build: {
      // A sandboxed preload must be CommonJS.
      rollupOptions: {
        input: 'src/preload/index.ts',
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'src/renderer',
    // Relative asset URLs: the same build is served at /ui/ and loaded by the Electron window.
    base: './',
    plugins: [react()],
    build: { rollupOptions: { input: 'src/renderer/index.html' } },
  },
});
