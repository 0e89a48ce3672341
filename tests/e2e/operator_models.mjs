// Validates prometheus-operator objects with @kubernetes-models/prometheus-operator (ajv schemas generated
// from the CRDs; shared/spec/tooling.md §4). Usage: node operator_models.mjs NODE_PREFIX < objects.json
// Prints a JSON list with, per object, null (valid) or the first schema error message.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const prefix = process.argv[2];
const models = await import(pathToFileURL(
  `${prefix}/node_modules/@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/index.js`).href);
const objects = JSON.parse(readFileSync(0, "utf8"));
const results = objects.map((obj) => {
  const Model = models[obj.kind];
  if (!Model) return `no model for kind ${obj.kind}`;
  try {
    new Model(obj).validate();
    return null;
  } catch (error) {
    return error.message;
  }
});
process.stdout.write(JSON.stringify(results));
