//! The gRPC binding's shared parts (feature `grpc`): the messages and service of
//! `lf.a2a.v1.A2AService`, their conversion to and from [`crate::types`], and the error mapping.
//!
//! The server side lives in [`crate::server`] (`A2aServerBuilder::grpc_addr`), the client side in
//! [`crate::client`] (chosen from the card like the other bindings).

#[cfg(feature = "server")]
pub(crate) mod codec;
pub(crate) mod convert;
pub mod status;

pub use convert::MissingMember;

/// The generated protobuf types of the gRPC binding: the messages of `lf.a2a.v1`, and the
/// `A2AService` client (`a2a_service_client`, feature `client`) and server
/// (`a2a_service_server`, feature `server`).
///
/// Generated at build time by prost and tonic (`build.rs`, compiled with protox, so no
/// `protoc` is needed) from `a2a-runtime/proto/a2a.proto`, which restates the A2A v1.0
/// specification's `specification/a2a.proto` (tag v1.0.0): package, service, message, field and
/// enum names and every field number are the specification's. Maps are `BTreeMap`s.
///
/// These are the wire types; the crate's API speaks [`crate::types`], and the messages convert
/// to and from them with `From` (`pb::Task::from(task)`), or `TryFrom` where a one-of member is
/// required ([`MissingMember`]). Use them to call the service with tonic directly, or to read
/// what a gRPC peer sent. The items are generated and carry no documentation of their own:
/// each has the name and fields of the specification's message of the same name.
#[allow(
    missing_docs,
    unreachable_pub,
    missing_debug_implementations,
    clippy::all,
    clippy::pedantic,
    rust_2018_idioms
)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.rs"));
    include!(concat!(env!("OUT_DIR"), "/server/lf.a2a.v1.rs"));
}

/// The service that carries the methods extensions add, `a2a_runtime.extensions.v1`, as
/// generated from `proto/extension_methods.proto`: an extension method is called through its one
/// RPC, `/a2a_runtime.extensions.v1.ExtensionMethods/Call`, which names the method (its
/// JSON-RPC name) in the request and carries the params and the result as
/// `google.protobuf` values.
#[allow(
    missing_docs,
    unreachable_pub,
    missing_debug_implementations,
    clippy::all,
    clippy::pedantic,
    rust_2018_idioms
)]
pub mod extension_methods {
    include!(concat!(env!("OUT_DIR"), "/a2a_runtime.extensions.v1.rs"));
    include!(concat!(
        env!("OUT_DIR"),
        "/server/a2a_runtime.extensions.v1.rs"
    ));
}

/// The full name of the service, as in gRPC paths (`/lf.a2a.v1.A2AService/SendMessage`).
pub const SERVICE_NAME: &str = "lf.a2a.v1.A2AService";

/// The `a2a-version` metadata key.
pub const VERSION_KEY: &str = "a2a-version";
/// The `a2a-extensions` metadata key.
pub const EXTENSIONS_KEY: &str = "a2a-extensions";
