import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { resolveConnection } from './api/connection.js';
import { App } from './app.js';
import './styles.css';

// Read before the first render: the key leaves the address bar at once.
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App initial={resolveConnection()} />
  </StrictMode>,
);
