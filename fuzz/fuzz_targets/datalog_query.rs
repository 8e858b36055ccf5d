#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| forkful::fuzz_checks::datalog_query(data));
