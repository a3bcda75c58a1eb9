import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AdminMount } from './admin-options';
import { sendAsset } from './http-io';

/** The dashboard's files (in the package, next to dist/) and uPlot's, by their URL path. */
const ASSETS: ReadonlyArray<{ path: string; file: () => string; type: string }> = [
  { path: '/', file: () => join(DASHBOARD_DIR, 'index.html'), type: 'text/html; charset=utf-8' },
  {
    path: '/dashboard/app.js',
    file: () => join(DASHBOARD_DIR, 'app.js'),
    type: 'text/javascript; charset=utf-8',
  },
  {
    path: '/dashboard/style.css',
    file: () => join(DASHBOARD_DIR, 'style.css'),
    type: 'text/css; charset=utf-8',
  },
  {
    path: '/dashboard/uplot.js',
    file: () => require.resolve('uplot/dist/uPlot.iife.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
  {
    path: '/dashboard/uplot.css',
    file: () => require.resolve('uplot/dist/uPlot.min.css'),
    type: 'text/css; charset=utf-8',
  },
];

/** packages/admin/dashboard, from dist/src. */
const DASHBOARD_DIR = join(__dirname, '..', '..', 'dashboard');

/**
 * Serves the dashboard: static files read once at mount (no build at start, no CDN: uPlot comes
 * from the installed package). The page holds no data; it asks the API with the token the
 * operator signs in with.
 */
export function mountDashboard(mount: AdminMount): void {
  for (const a of ASSETS) {
    const body = readFileSync(a.file());
    mount.route('GET', a.path, (_req, res) => sendAsset(res, a.type, body));
  }
}
