//! `cfg(interop)` when `CI` is set, as in the tests crate (tests/build.rs): tests/cli.rs runs
//! the official Python SDK's server as the interop tests do, and is switched the same way.

#[path = "../tests/build.rs"]
mod interop;

fn main() {
    interop::main();
}
