//! The server over real HTTP on both bindings, one behaviour per module (one test binary: the
//! link time of a binary per file dominates a test run).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents;
mod cancel;
mod card;
mod examples;
mod limits;
mod list;
mod pipeline;
mod protocol;
mod push;
mod send;
mod stream;
