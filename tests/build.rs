//! `cfg(interop)`: set when `CI` is (`.ci/run` sets it). The interop tests, which install the
//! official SDKs, are compiled as ignored without it (`#[cfg_attr(not(interop), ignore = ..)]`),
//! so a local run without the peers reports them as ignored rather than passing; under CI they
//! run, and fail when a peer cannot be installed. `cargo test -- --ignored` runs them anywhere.
//! `examples/build.rs` runs this one too.

pub(crate) fn main() {
    println!("cargo::rustc-check-cfg=cfg(interop)");
    println!("cargo::rerun-if-env-changed=CI");
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));
    if ci {
        println!("cargo::rustc-cfg=interop");
    }
}
