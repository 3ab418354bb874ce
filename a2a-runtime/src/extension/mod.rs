//! Extensions: declared with `#[a2a_extension]`, negotiated per request, typed end to end.
//!
//! An extension is a struct annotated with [`a2a_extension`](crate::a2a_extension). Its fields
//! are its params (published in the card's `capabilities.extensions[].params`), and the
//! attribute implements [`Extension`] (the URI, `required`, the description, the metadata type
//! and key) and registers the type so the server finds it. That is a complete data-only
//! extension:
//!
//! ```
//! use a2a_runtime::a2a_extension;
//! use serde::{Deserialize, Serialize};
//!
//! /// Adds the caller's location to messages.
//! #[a2a_extension(uri = "https://example.com/ext/geo/v1", metadata = GeoPoint)]
//! #[derive(Clone, Debug, Default, Serialize, Deserialize)]
//! struct Geo {
//!     precision_m: u32,
//! }
//!
//! #[derive(Serialize, Deserialize)]
//! struct GeoPoint {
//!     lat: f64,
//!     lon: f64,
//! }
//! ```
//!
//! Behaviour is an ordinary `impl` of [`ExtensionHooks`]: `activate` decides per request,
//! `handle_request` / `handle_response` see and may change what goes in and out of every
//! operation (streamed events included), `observe_response` reads every result and event as the
//! client gets it (metrics, logs, audit: a result nobody may change is encoded once, for the
//! store and the reply), `handle_event` sees the agent's events before they are stored, and
//! `check_transition` vets the agent's status changes.
//!
//! The kinds of extension, each with a page and a complete example: [`data_only`], [`profile`],
//! [`method`] (new RPC methods), [`state_machine`] (sub-states of the task lifecycle), and
//! [`dependencies`] between extensions.
//!
//! Configuration and policy, on the server builder: an extension's
//! [`init`](ExtensionHooks::init) gets the operator's [`ExtensionOptions`]
//! (`.extension_with(value, options)`) and a failing `init` stops the build; an
//! [`ActivationPolicy`] (`.activation_policy::<E>(..)`) says which callers (tenant, principal,
//! role, claim) may activate an extension, before its `activate` runs; [`MetadataHygiene`]
//! (`.metadata_hygiene(..)`) keeps the metadata of extensions that are not active on a request
//! out of what it is answered.
//!
//! Negotiation, on every operation of every binding: the client names extensions in
//! `A2A-Extensions` (comma-separated, repeated headers merged, `X-A2A-Extensions` accepted);
//! exact URI match, unknown URIs ignored, no fallback to another version; a `required` extension
//! the request did not name is ExtensionSupportRequired (-32008) before anything is activated;
//! the requested, configured extensions are activated in declaration order; the activated URIs
//! are echoed in the response's `A2A-Extensions` header (streams too).

pub(crate) mod activation_value;
mod builtin;
mod context;
pub mod data_only;
pub mod dependencies;
mod entry;
pub(crate) mod erased;
mod header;
pub(crate) mod hygiene;
pub(crate) mod implemented;
mod metadata;
pub mod method;
mod method_entry;
mod negotiated;
mod negotiation;
mod options;
mod policy;
pub mod profile;
pub(crate) mod registry;
mod set;
pub mod state_machine;
#[cfg(test)]
mod tests;
pub(crate) mod traits;

pub use builtin::TimestampExtension;
pub use context::RequestContext;
pub use dependencies::Dependencies;
pub use header::{
    ExtensionsHeaderError, MAX_EXTENSION_URIS, format_extensions_header, parse_extensions_header,
};
pub use hygiene::MetadataHygiene;
pub use metadata::{AgentCardExt, HasMetadata, MetadataError, MetadataExt};
pub use method::{ExtensionMethod, MethodContext, MethodEntry, TaskAccess};
pub use negotiated::{Activated, Activation, Negotiated};
pub use options::ExtensionOptions;
pub use policy::{ActivationPolicy, Caller};
pub use registry::{ExtensionRegistry, LinkedExtension, RegistryError};
pub use set::{ExtensionMetrics, ExtensionSet};
pub use state_machine::{StateMachine, SubState, SubStateExt, Transition};
pub use traits::{Activate, Extension, ExtensionHooks, Reply};
