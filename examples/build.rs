//! `cfg(interop)` when `CI` is set, as in the tests crate (tests/build.rs): tests/openapi.rs
//! installs Python tools as the interop tests do, and is switched the same way.

#[path = "../tests/build.rs"]
mod interop;

fn main() {
    interop::main();
}
