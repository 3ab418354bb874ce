//! The official SDKs (Python `a2a-sdk`, JS `@a2a-js/sdk`) against us, over real HTTP (one test
//! binary: the link time of a binary per file dominates a test run): their clients against our
//! server, and our client against the Python SDK's server.
//!
//! Every test here installs its peer on first use (`a2a_tests::interop`): it runs when `CI` is
//! set (`.ci/run` sets it) or with `--ignored`, failing when the peer cannot be installed, and
//! is reported as ignored otherwise (`cfg(interop)`, tests/build.rs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod js_client;
mod python_client;
mod python_server;
