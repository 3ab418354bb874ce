//! `cfg(interop)` when `CI` is set, as in the tests crate (tests/build.rs): the CLI tests that
//! run the official Python SDK's server are switched the same way as the interop tests. Written
//! out here, not included from tests/build.rs: a published crate's build script is in its
//! package.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(interop)");
    println!("cargo::rerun-if-env-changed=CI");
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));
    if ci {
        println!("cargo::rustc-cfg=interop");
    }
}
