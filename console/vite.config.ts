// Builds the web console (console/) into dist/console, which `wharf serve` serves at `/` (ADR 0032).
// Also the Vitest configuration of the console's component and logic tests (jsdom).
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here("."),
  base: "/",
  // Out of console/ (its mtime marks dist/ stale) and out of the shared node_modules.
  cacheDir: here("../.tmp/vite-console"),
  plugins: [react()],
  resolve: { alias: { "wharf/sdk": here("../src/sdk/index.ts") } },
  build: {
    outDir: here("../dist/console"),
    emptyOutDir: true,
    assetsDir: "assets",
    // No inline assets: the CSP allows no data: scripts or styles.
    assetsInlineLimit: 0,
    reportCompressedSize: true,
    chunkSizeWarningLimit: 600,
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
  },
});
