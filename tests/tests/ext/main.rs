//! Extensions end to end over real HTTP, one concern per module (one test binary: the link time
//! of a binary per file dominates a test run): hooks on every operation, negotiation, `init`
//! with options, the activation policy, metadata hygiene, extensions of the extended card, and
//! the built-in Timestamp extension.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod extended_card;
mod hooks;
mod init;
mod metadata_hygiene;
mod negotiation;
mod policy;
mod support;
mod timestamp;
