#![doc = include_str!("../README.md")]
//!
//! # Module layers
//!
//! Dependencies inside the crate point one way: a module uses only the modules of the layers
//! below its own, never one of its layer or above (`.ci/layers` checks it on every CI run).
//! From the bottom:
//!
//! 1. `error`, `log`: the errors every layer answers with; the readable log on stderr
//! 2. `json`: reading and writing the wire format (ProtoJSON, JSON-RPC envelopes)
//! 3. `types`: the protocol's data types
//! 4. `protocol`: the request model: operations, their typed params, the caller, headers, trace
//! 5. `compat`, `grpc`, `otel`, `store`: v0.3 and protobuf encodings, span export, persistence
//!    (`store` with feature `server`)
//! 6. `extension`: extensions, their negotiation, the `RequestContext` they see
//! 7. `core`, `samples`: the request handler, the task runtime, the agent API (feature `server`);
//!    the published sample extensions
//! 8. `auth`, `push`: authentication and push delivery, plugged into the core by the server
//!    (`auth` with `server` or `jwt`, `push` with `push`)
//!
//! A client-only build (`--no-default-features --features client`) compiles none of `core`,
//! `store`, `auth`, `push`, `service` and `server`.
//! 9. `service`: the request pipeline every binding runs a request through (feature `server`)
//! 10. `client`, `server`: the bindings
//! 11. `test`, `prelude`: helpers to test an agent through both bindings (feature `test-util`);
//!     what agent and extension authors write with, in one import
//! 12. `__private`: what the output of `#[a2a_extension]` names
#![cfg_attr(docsrs, feature(doc_cfg))]

// Lets the attribute's output (`::a2a_runtime::…`) resolve inside this crate too.
extern crate self as a2a_runtime;

#[cfg(any(feature = "server", feature = "jwt"))]
pub mod auth;
#[cfg(feature = "client")]
pub mod client;
#[cfg(any(feature = "server", feature = "client"))]
pub mod compat;
#[cfg(feature = "server")]
pub mod core;
pub mod error;
pub mod extension;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod json;
#[cfg(feature = "log")]
pub mod log;
#[cfg(feature = "otel")]
pub mod otel;
pub mod prelude;
pub mod protocol;
#[cfg(feature = "push")]
pub mod push;
#[cfg(feature = "samples")]
pub mod samples;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "server")]
pub mod service;
#[cfg(feature = "server")]
pub mod store;
#[cfg(feature = "test-util")]
pub mod test;
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
