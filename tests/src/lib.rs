//! Shared helpers of the cross-crate tests, beside the ones users get from
//! `a2a_runtime::test` (the test server, both bindings, the SSE reader): what only these tests
//! need.
//!
//! - [`agent`]: a scripted agent whose progress the test controls (never sleeps);
//! - [`params`]: the JSON of requests and answers;
//! - [`client`]: the agents and servers the client tests talk to, and a raw HTTP server;
//! - [`pg`]: a PostgreSQL database (or server) of its own per test;
//! - [`interop`]: the official SDK peers, installed on first use;
//! - [`prometheus`]: a strict parser of the Prometheus text format.
//!
//! Test helpers fail the test by panicking, with a message saying what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod agent;
pub mod client;
pub mod interop;
pub mod params;
pub mod pg;
pub mod prometheus;
