//! Dependencies between extensions.
//!
//! An extension names the extensions it needs (required) and those it uses when present
//! (optional), by type or by URI, in [`ExtensionHooks::dependencies`](super::ExtensionHooks::dependencies):
//!
//! - at startup, a server whose configuration lacks a required dependency refuses to build
//!   ([`RegistryError::MissingDependency`](super::RegistryError::MissingDependency));
//! - per request, activating an extension without also requesting its required dependencies is
//!   refused with ExtensionSupportRequired (-32008), naming both;
//! - an optional dependency is visible to the extension's hooks when it is active
//!   (`ctx.is_active::<Dep>()` in `handle_request`);
//! - the client sends the required dependencies of its extensions in `A2A-Extensions` too.
//!
//! ```
//! use a2a_runtime::a2a_extension;
//! use a2a_runtime::extension::{Dependencies, ExtensionHooks};
//! use serde::{Deserialize, Serialize};
//!
//! /// Signs messages.
//! #[a2a_extension(uri = "https://example.com/ext/signing/v1")]
//! #[derive(Default, Serialize, Deserialize)]
//! struct Signing {}
//!
//! /// Notarizes signed messages; uses timestamps when present.
//! #[a2a_extension(uri = "https://example.com/ext/notary/v1")]
//! #[derive(Default, Serialize, Deserialize)]
//! struct Notary {}
//!
//! impl ExtensionHooks for Notary {
//!     type Activation = ();
//!     fn dependencies(&self) -> Dependencies {
//!         Dependencies::new()
//!             .requires::<Signing>()
//!             .optional_uri("https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1")
//!     }
//! }
//! ```

/// The dependencies of an extension, as URIs.
///
/// `requires::<E>()` and `optional::<E>()` name one by its type (they are defined beside
/// [`Extension`](super::Extension), whose URI they read).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    /// Extensions that must be configured, and requested together with this one.
    pub required: Vec<&'static str>,
    /// Extensions this one uses when they are active.
    pub optional: Vec<&'static str>,
}

impl Dependencies {
    /// No dependencies.
    pub fn new() -> Self {
        Self::default()
    }

    /// Requires the extension with `uri`.
    pub fn requires_uri(mut self, uri: &'static str) -> Self {
        if !self.required.contains(&uri) {
            self.required.push(uri);
        }
        self
    }

    /// Uses the extension with `uri` when active.
    pub fn optional_uri(mut self, uri: &'static str) -> Self {
        if !self.optional.contains(&uri) {
            self.optional.push(uri);
        }
        self
    }
}
