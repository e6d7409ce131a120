//! libFuzzer entry point: see `floe_fuzz::bzip2`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| floe_fuzz::bzip2::run(data));
