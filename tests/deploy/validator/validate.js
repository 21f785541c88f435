// Validates Kubernetes manifests offline against the API's JSON schemas: kubernetes-models 4.5.1
// (Kubernetes 1.27) for the built-in kinds, @kubernetes-models/prometheus-operator for
// ServiceMonitor and PrometheusRule. A kind with no schema here is an error, not a pass.
//
//   node validate.js FILE.yaml...      every document of every file; prints one JSON object,
//                                      {"documents": [...], "errors": ["Kind/name: message", ...]},
//                                      and exits 1 when any document is invalid
//   node validate.js --parse FILE.yaml only parses: {"documents": [...]}
//
// The packages come from CL_K8S_VALIDATOR_DIR (scripts/setup.sh installs them there with
// `npm ci --ignore-scripts` from this directory's package-lock.json).
"use strict";
const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

const dir = process.env.CL_K8S_VALIDATOR_DIR;
if (!dir || !fs.existsSync(path.join(dir, "node_modules", "kubernetes-models"))) {
  console.error(`validate.js: no kubernetes-models under CL_K8S_VALIDATOR_DIR (${dir}); run scripts/setup.sh`);
  process.exit(2);
}
const load = createRequire(path.join(dir, "node_modules", "_"));
const yaml = load("js-yaml");

// apiVersion + kind -> the model class, or an error string.
function modelFor(apiVersion, kind) {
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const module =
    group === "monitoring.coreos.com"
      ? `@kubernetes-models/prometheus-operator/${group}/${version}`
      : group
        ? `kubernetes-models/${group}/${version}`
        : `kubernetes-models/${version}`;
  let exports;
  try {
    exports = load(module);
  } catch (e) {
    return `no schema for apiVersion ${apiVersion} (${module})`;
  }
  return exports[kind] || `no schema for kind ${kind} in ${apiVersion}`;
}

function validate(doc) {
  if (!doc || typeof doc !== "object") return ["not an object"];
  if (!doc.apiVersion || !doc.kind) return ["no apiVersion or kind"];
  const Model = modelFor(doc.apiVersion, doc.kind);
  if (typeof Model === "string") return [Model];
  try {
    new Model(doc).validate();
    return [];
  } catch (e) {
    // ValidationError lists each failure as {instancePath, message}.
    if (Array.isArray(e.errors)) return e.errors.map((x) => `${x.instancePath || "/"} ${x.message}`);
    return [String(e.message || e)];
  }
}

const args = process.argv.slice(2);
const parseOnly = args[0] === "--parse";
const files = parseOnly ? args.slice(1) : args;
if (files.length === 0) {
  console.error("usage: node validate.js [--parse] FILE.yaml...");
  process.exit(2);
}
const documents = [];
const errors = [];
for (const file of files) {
  for (const doc of yaml.loadAll(fs.readFileSync(file, "utf8"))) {
    if (doc === null || doc === undefined) continue; // empty documents between "---"
    documents.push(doc);
    if (parseOnly) continue;
    const name = `${doc.kind}/${doc.metadata && doc.metadata.name}`;
    for (const message of validate(doc)) errors.push(`${name}: ${message}`);
  }
}
process.stdout.write(JSON.stringify(parseOnly ? { documents } : { documents, errors }) + "\n");
process.exit(errors.length ? 1 : 0);
