//! The client against our server and against broken ones, over real HTTP on both bindings, one
//! concern per module (one test binary: the link time of a binary per file dominates a test
//! run): every operation, extensions and the card cache, and servers that break the protocol.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bad_servers;
mod bounds;
mod card_fetch;
mod extensions;
mod ops;
mod per_call;
mod resume;
mod retry;
