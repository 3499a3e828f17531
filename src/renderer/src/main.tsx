import './zod-jitless.js';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { resolveConnection } from './api/connection.js';
import { createQueryClient } from './api/query-client.js';
import { App } from './app.js';
import './styles.css';

// Read before the first render: the key leaves the address bar at once.
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={createQueryClient()}>
      <App initial={resolveConnection()} />
    </QueryClientProvider>
  </StrictMode>,
);
