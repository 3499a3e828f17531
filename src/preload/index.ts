import { contextBridge } from 'electron';
import { exposeConnection } from './expose-connection.js';

// Sandboxed: this bundle may require only `electron`; the connection comes in on argv.
exposeConnection(contextBridge, process.argv, process.platform);
