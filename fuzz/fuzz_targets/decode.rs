//! libFuzzer entry point: see `floe_fuzz::decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| floe_fuzz::decode::run(data));
