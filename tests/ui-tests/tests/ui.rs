#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Diagnostics of `#[a2a_extension]`: each misuse in `ui/fail` gives exactly the error in
//! its `.stderr` file (one clear error at the user's token); `ui/pass` compiles and runs.
//!
//! The expected output depends on the compiler's rendering, so the test is pinned to the stable
//! toolchain the project is developed with. Regenerate with
//! `TRYBUILD=overwrite cargo test -p a2a-ui-tests --test ui`, then read every `.stderr`.

#[rustversion::attr(not(stable(1.95)), ignore = "UI output is pinned to stable 1.95")]
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/fail/*.rs");
    t.pass("ui/pass/*.rs");
}
