//! libFuzzer entry point: see `floe_fuzz::slice`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| floe_fuzz::slice::run(data));
