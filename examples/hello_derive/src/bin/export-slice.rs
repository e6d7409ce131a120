//! Writes the Rust-first `Demo::Hello` as a Slice file, for Ice for C++,
//! Python, Java or JavaScript peers (slice2cpp, slice2py, ...).
//!
//! ```sh
//! cargo run -p floe-example-hello-derive --bin export-slice                # to stdout
//! cargo run -p floe-example-hello-derive --bin export-slice -- Hello.ice   # to a file
//! ```

use floe_example_hello_derive::HelloSlice;

fn main() -> std::io::Result<()> {
    let text = HelloSlice::ice_slice();
    match std::env::args().nth(1) {
        Some(path) => std::fs::write(path, text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}
