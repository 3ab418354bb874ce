//! The wire format without a server, one concern per module (one test binary: the link time of
//! a binary per file dominates a test run): the spec's examples byte for byte, ProtoJSON
//! leniency and strictness, hostile input, round-trip properties, and the official crates as
//! oracles.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bad_input;
mod differential;
mod golden;
mod leniency;
mod roundtrip;
