import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The gateway serves dist/ at /console from its own origin, under a CSP without inline scripts or
// styles; `vite` (the dev server) forwards the console API to a gateway started with `npm start`.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inlined assets: everything is a file the CSP's 'self' allows (img-src also allows data:).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
  server: {
    proxy: { '/console/api': 'http://127.0.0.1:3000' },
  },
});
