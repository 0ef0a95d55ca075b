// Instantiate the purehdf wasm32 test module with NO imports and run each
// exported check. A trap (a Rust panic aborts into `unreachable`) or a
// non-zero result fails the run. Usage: node run.mjs path/to/module.wasm
import { readFileSync } from "node:fs";

const bytes = readFileSync(process.argv[2]);
const { instance } = await WebAssembly.instantiate(bytes, {});
const ex = instance.exports;
const message = () => {
  const ptr = ex.message_ptr(), len = ex.message_len();
  return new TextDecoder().decode(new Uint8Array(ex.memory.buffer, ptr, len));
};
let failed = 0;
for (const name of ["check_typed_reads", "check_raw_chunks", "check_write_read", "check_medh5"]) {
  let rc;
  try {
    rc = ex[name]();
  } catch (e) {
    console.log(`FAIL ${name}: trapped: ${e}`);
    failed++;
    continue;
  }
  if (rc === 0) {
    console.log(`ok   ${name}: ${message()}`);
  } else {
    console.log(`FAIL ${name}: ${message()}`);
    failed++;
  }
}
console.log(`wasm32: ${4 - failed}/4 checks passed under node ${process.version}`);
process.exit(failed ? 1 : 0);
