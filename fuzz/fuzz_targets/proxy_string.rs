//! libFuzzer entry point: see `floe_fuzz::proxy_string`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| floe_fuzz::proxy_string::run(data));
