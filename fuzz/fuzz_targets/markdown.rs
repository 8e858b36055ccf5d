#![no_main]

// The checks, shared with the test suite (tests/it/fuzz.rs).
#[allow(dead_code)]
#[path = "../../tests/support/fuzz_checks.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::markdown(data));
