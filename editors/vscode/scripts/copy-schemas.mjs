// Copies the JSON Schemas of the repository (../../schemas/*.json) into ./schemas, so that the
// jsonValidation/yamlValidation contributions point at files inside the packaged extension.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const source = join(here, "..", "..", "schemas");
const target = join(here, "schemas");

const names = readdirSync(source).filter((name) => name.endsWith(".json")).sort();
if (names.length === 0) {
  console.error(`copy-schemas: no *.json in ${source}`);
  process.exit(1);
}
rmSync(target, { recursive: true, force: true });
mkdirSync(target, { recursive: true });
for (const name of names) {
  copyFileSync(join(source, name), join(target, name));
}
console.log(`copy-schemas: ${names.length} schemas -> schemas/ (${names.join(", ")})`);
