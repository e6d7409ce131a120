//! Compile-fail cases: every unsupported construct is a spanned error
//! (goldens in `tests/ui/*.stderr`; regenerate with `TRYBUILD=overwrite`
//! and review the diff).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
