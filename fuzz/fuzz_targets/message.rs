//! libFuzzer entry point: see `floe_fuzz::message`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| floe_fuzz::message::run(data));
