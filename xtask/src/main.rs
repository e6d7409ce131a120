//! Project tasks: `cargo xtask test`, `cargo xtask demo`.
fn main() {
    eprintln!("usage: cargo xtask <test|demo>");
}
