#![doc = include_str!("../../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Lets the attribute's output (`::a2a_runtime::…`) resolve inside this crate too.
extern crate self as a2a_runtime;

pub mod auth;
#[cfg(feature = "client")]
pub mod client;
#[cfg(any(feature = "server", feature = "client"))]
pub mod compat;
pub mod core;
pub mod error;
pub mod extension;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod json;
pub mod json_out;
#[cfg(feature = "otel")]
pub mod otel;
pub mod protocol;
#[cfg(feature = "push")]
pub mod push;
#[cfg(feature = "server")]
pub mod server;
pub mod store;
pub mod types;

pub use async_trait::async_trait;

#[doc(hidden)]
pub mod __private;

/// The hasher of the runtime's maps: fast, and seeded per map so keys sent by clients cannot be
/// chosen to collide.
pub(crate) type FastHash = foldhash::fast::RandomState;

pub use a2a_macros::a2a_extension;
pub use error::A2aError;

/// The protocol version this crate speaks (`Major.Minor`).
pub const PROTOCOL_VERSION: &str = "1.0";
