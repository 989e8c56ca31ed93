#!/usr/bin/env node
// The `tms-client` command. In this repository it runs the TypeScript sources through tsx (no build
// step, like the other packages); an installed package has no src/ and runs the compiled dist/.
// This file is the composition root: it hands the arguments and the environment to main().
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/main.ts', import.meta.url);
let main;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(source.href));
} else {
  ({ main } = await import(new URL('../dist/cli/main.js', import.meta.url).href));
}
process.exitCode = await main(process.argv.slice(2), process.env);
