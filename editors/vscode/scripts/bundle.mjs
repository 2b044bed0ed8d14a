// Bundles src/extension.ts and its dependencies (vscode-languageclient) into dist/extension.js.
// `--production` minifies and drops the source map (used by vscode:prepublish).
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");
await esbuild.build({
  entryPoints: ["src/extension.ts"],
  bundle: true,
  outfile: "dist/extension.js",
  external: ["vscode"],
  format: "cjs",
  platform: "node",
  target: "node18",
  minify: production,
  sourcemap: !production,
  logLevel: "info",
});
