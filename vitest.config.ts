import { defineConfig } from "vitest/config";

// Pure-logic tests of js/view (no DOM). They read the JSON graph fixtures that the Python
// tests share: tests/fixtures/graphs/*.json (regenerate with make_fixtures.py).
export default defineConfig({
  test: {
    include: ["js/**/*.test.ts"],
    environment: "node",
  },
});
