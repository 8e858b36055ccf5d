#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| forkful::fuzz_checks::recipe_page(data));
