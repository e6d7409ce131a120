//! The Slice compiler: preprocessor, parser, validation and Rust code
//! generation over arbitrary text. Errors are diagnostics, never panics.

use std::path::Path;

use floe_idl::codegen::{generate, Settings};
use floe_idl::{compile_source, Options};

/// Compiles the input (UTF-8 text) as a Slice file that lives in a
/// directory that does not exist (so relative `#include`s find nothing),
/// then generates Rust from what compiles.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // An absolute `#include` of a device or a kernel file could block or
    // never end: that is the file system, not the compiler.
    if ["/dev", "/proc", "/sys"].iter().any(|p| text.contains(p)) {
        return;
    }
    let path = Path::new("/nonexistent/floe-fuzz/Fuzz.ice");
    if let Ok(out) = compile_source(path, text, &Options::default()) {
        let _ = generate(&out.model, &Settings::default());
    }
}
