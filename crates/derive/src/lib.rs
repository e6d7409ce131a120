//! floe-derive: proc macros for Rust-first Ice interfaces and types.
