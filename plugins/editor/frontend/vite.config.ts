import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

// The build lands inside the Python package so `make run` serves it without Node.
export default defineConfig({
  plugins: [react()],
  base: "/",
  build: {
    outDir: "../service_editor/static",
    emptyOutDir: true,
    assetsDir: "assets",
    target: "es2020",
    sourcemap: false,
    chunkSizeWarningLimit: 700,
  },
  server: {
    port: 5173,
    proxy: {
      "/api": { target: "http://127.0.0.1:7860", changeOrigin: false },
      "/health": { target: "http://127.0.0.1:7860" },
    },
  },
  test: {
    environment: "node",
    include: ["src/**/*.test.ts"],
  },
});
