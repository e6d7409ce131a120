//! libFuzzer entry point: see `floe_fuzz::connection`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| floe_fuzz::connection::run(data));
