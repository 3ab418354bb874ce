//! [`ExtensionSet`]: the configured extensions of a server or client, checked and ordered,
//! with their counters.
// The server negotiates and serves what a client only declares: without the `server` feature
// the serving half is unused.
#![cfg_attr(not(feature = "server"), allow(dead_code))]

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use super::entry::Entry;
use super::method_entry::MethodEntry;
use super::negotiated::Negotiated;
use crate::error::A2aError;
use crate::types::AgentExtension;

/// A single `A2A-Extensions` value as received and what [`ExtensionSet::begin`] made of it.
pub(super) type RecentNegotiation = (Box<[u8]>, Arc<Negotiated>);

/// How many `A2A-Extensions` values an extension set keeps the negotiation of.
pub(super) const RECENT_VALUES: usize = 8;

/// A snapshot of one extension's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtensionMetrics {
    /// The extension's URI.
    pub uri: &'static str,
    /// Requests it was activated for.
    pub activations: u64,
    /// Requests that asked for it and that it skipped.
    pub skips: u64,
    /// Requests it refused (activation errors, missing dependencies).
    pub refusals: u64,
    /// Hook calls that returned an error.
    pub hook_errors: u64,
    /// Requests that asked for it and that its [`ActivationPolicy`](super::ActivationPolicy)
    /// refused (skipped when optional, refused when required).
    pub denials: u64,
}

/// The configured extensions of a server (or client), in declaration order. Cheap to clone
/// (clones share the extensions, their counters and the negotiation cache).
#[derive(Clone, Default)]
pub struct ExtensionSet {
    pub(super) inner: Arc<SetInner>,
}

/// What an [`ExtensionSet`] shares between its clones and the requests it negotiated.
#[derive(Default)]
pub(crate) struct SetInner {
    pub(super) entries: Vec<Arc<Entry>>,
    /// URI → position in `entries`.
    pub(super) index: HashMap<&'static str, usize>,
    pub(super) methods: Vec<MethodEntry>,
    /// The last single `A2A-Extensions` values negotiated, most recently used first (see
    /// `negotiation`).
    pub(super) recent: Mutex<Vec<RecentNegotiation>>,
}

impl std::fmt::Debug for ExtensionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.inner.entries.iter().map(|e| e.uri))
            .finish()
    }
}

impl ExtensionSet {
    /// True when no extension is configured.
    pub fn is_empty(&self) -> bool {
        self.inner.entries.is_empty()
    }

    /// The URIs, in declaration order.
    pub fn uris(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.inner.entries.iter().map(|e| e.uri)
    }

    /// The URIs of the configured extensions and of their required dependencies (what a
    /// client sends in `A2A-Extensions`).
    pub fn uris_with_dependencies(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for e in &self.inner.entries {
            for uri in std::iter::once(e.uri).chain(e.dependencies.required.iter().copied()) {
                if !out.contains(&uri) {
                    out.push(uri);
                }
            }
        }
        out
    }

    /// The card declarations, in declaration order.
    pub fn declarations(&self) -> Vec<AgentExtension> {
        self.inner
            .entries
            .iter()
            .map(|e| e.ext.declaration())
            .collect()
    }

    /// True when the extension with `uri` is declared on the extended card only (and so
    /// activated only for authenticated callers).
    pub fn is_extended_card_only(&self, uri: &str) -> bool {
        self.inner
            .entries
            .iter()
            .any(|e| e.extended_only && e.uri == uri)
    }

    /// The counters of every extension, in declaration order.
    pub fn metrics(&self) -> Vec<ExtensionMetrics> {
        self.inner
            .entries
            .iter()
            .map(|e| ExtensionMetrics {
                uri: e.uri,
                activations: e.counters.activations.load(Ordering::Relaxed),
                skips: e.counters.skips.load(Ordering::Relaxed),
                refusals: e.counters.refusals.load(Ordering::Relaxed),
                hook_errors: e.counters.hook_errors.load(Ordering::Relaxed),
                denials: e.counters.denials.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// The method named `name` (JSON-RPC), if an extension serves it.
    pub(crate) fn method(&self, name: &str) -> Option<&MethodEntry> {
        self.inner.methods.iter().find(|m| m.method == name)
    }

    /// The method served at REST `path`, if any.
    pub(crate) fn method_at(&self, path: &str) -> Option<&MethodEntry> {
        self.inner.methods.iter().find(|m| m.rest_path == path)
    }

    /// True when some extension adds methods.
    pub fn has_methods(&self) -> bool {
        !self.inner.methods.is_empty()
    }

    /// The required extensions missing from `requested`: ExtensionSupportRequired naming all.
    pub fn check_required(&self, requested: &[String]) -> Result<(), A2aError> {
        let missing: Vec<String> = self
            .inner
            .entries
            .iter()
            .filter(|e| e.ext.required() && !requested.iter().any(|r| r == e.uri))
            .map(|e| e.uri.to_owned())
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(A2aError::ExtensionSupportRequired { uris: missing })
        }
    }

    /// Logs the enabled extensions (once, when a server or client is built).
    pub(super) fn log_enabled(&self) {
        if self.is_empty() {
            tracing::info!("a2a extensions: none");
            return;
        }
        let uris: Vec<&str> = self.uris().collect();
        tracing::info!(extensions = %uris.join(", "), "a2a extensions enabled");
        for e in self.inner.entries.iter().map(|e| &e.ext) {
            tracing::debug!(
                uri = e.uri(),
                r#type = e.type_name(),
                required = e.required(),
                hooks = e.has_hooks(),
                "a2a extension enabled"
            );
        }
    }
}
