//! Compile-fail and compile-pass tests of `#[a2a_extension]` (in `tests/ui.rs`); no library code.
