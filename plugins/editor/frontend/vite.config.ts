import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vitest/config";

const ROOT = __dirname;
const OUT = join(ROOT, "..", "service_editor", "static");
const INPUTS = ["index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "public", "src"];

function files(path: string): string[] {
  if (statSync(path).isDirectory()) return readdirSync(path).flatMap((name) => files(join(path, name)));
  return [path];
}

/**
 * sha256 of the sources the build depends on (tests and fixtures excluded). tests/editor/test_serving.py computes
 * the same digest, so committed assets that no longer match the source fail the Python tests, with no Node needed.
 */
export function sourceDigest(): string {
  const h = createHash("sha256");
  const all = INPUTS.flatMap((p) => files(join(ROOT, p)))
    .map((p) => relative(ROOT, p).split(sep).join("/"))
    .filter((p) => !p.endsWith(".test.ts") && !p.includes("__fixtures__/"))
    .sort();
  for (const rel of all) {
    h.update(rel + "\0");
    h.update(readFileSync(join(ROOT, rel)));
    h.update("\0");
  }
  return h.digest("hex");
}

function buildInfo(): Plugin {
  return {
    name: "service-build-info",
    apply: "build",
    closeBundle() {
      writeFileSync(join(OUT, "build-info.json"), JSON.stringify({ source_sha256: sourceDigest() }, null, 2) + "\n");
    },
  };
}

// The build lands inside the Python package so `make run` serves it without Node.
export default defineConfig({
  plugins: [react(), buildInfo()],
  base: "/",
  build: {
    outDir: OUT,
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
