//! [`ExtensionSet`]: the configured extensions of a server or client, checked and ordered,
//! with their counters.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::dependencies::Dependencies;
use super::erased::DynExtension;
use super::method::MethodEntry;
use super::negotiation::{Begun, RECENT_VALUES};
use super::registry::RegistryError;
use crate::error::A2aError;
use crate::protocol::Operation;
use crate::types::AgentExtension;

/// Counters of one extension, over the life of a server.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(super) activations: AtomicU64,
    pub(super) skips: AtomicU64,
    pub(super) refusals: AtomicU64,
    pub(super) hook_errors: AtomicU64,
}

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
}

/// The configured extensions of a server (or client), in declaration order. Cheap to clone
/// (clones share the extensions, their counters and the negotiation cache).
#[derive(Clone, Default)]
pub struct ExtensionSet {
    pub(super) inner: Arc<SetInner>,
}

/// One configured extension.
pub(crate) struct Entry {
    pub(super) ext: Box<dyn DynExtension>,
    pub(super) uri: &'static str,
    pub(super) counters: Counters,
    pub(super) dependencies: Dependencies,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

/// What an [`ExtensionSet`] shares between its clones and the requests it negotiated.
#[derive(Default)]
pub(crate) struct SetInner {
    pub(super) entries: Vec<Arc<Entry>>,
    /// URI → position in `entries`.
    pub(super) index: HashMap<&'static str, usize>,
    methods: Vec<MethodEntry>,
    /// The last single `A2A-Extensions` values negotiated, most recently used first (see
    /// `negotiation`).
    pub(super) recent: Mutex<Vec<Begun>>,
}

impl std::fmt::Debug for ExtensionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.inner.entries.iter().map(|e| e.uri))
            .finish()
    }
}

impl ExtensionSet {
    /// Checks dependencies and methods, and builds the set.
    pub(super) fn from_parts(
        exts: Vec<Box<dyn DynExtension>>,
        require_dependencies: bool,
    ) -> Result<Self, RegistryError> {
        let dependencies: Vec<Dependencies> = exts.iter().map(|e| e.dependencies()).collect();
        for (ext, deps) in exts
            .iter()
            .zip(&dependencies)
            .filter(|_| require_dependencies)
        {
            if let Some(missing) = deps
                .required
                .iter()
                .find(|d| !exts.iter().any(|e| e.uri() == **d))
            {
                return Err(RegistryError::MissingDependency {
                    extension: ext.uri().to_owned(),
                    dependency: (*missing).to_owned(),
                });
            }
        }
        let mut methods: Vec<MethodEntry> = Vec::new();
        for ext in &exts {
            for m in ext.methods() {
                let core = Operation::from_method(m.method).is_some()
                    || LEGACY_METHODS.contains(&m.method);
                if core {
                    return Err(RegistryError::ShadowsCoreMethod {
                        extension: ext.uri().to_owned(),
                        method: m.method.to_owned(),
                    });
                }
                if !m.rest_path.starts_with("/extensions/") {
                    return Err(RegistryError::BadMethodPath {
                        extension: ext.uri().to_owned(),
                        path: m.rest_path.to_owned(),
                    });
                }
                if m.extension != ext.uri() {
                    return Err(RegistryError::MethodOfOtherExtension {
                        extension: ext.uri().to_owned(),
                        method: m.method.to_owned(),
                        owner: m.extension.to_owned(),
                    });
                }
                if let Some(other) = methods
                    .iter()
                    .find(|o| o.method == m.method || o.rest_path == m.rest_path)
                {
                    return Err(RegistryError::DuplicateMethod {
                        method: m.method.to_owned(),
                        first: other.extension.to_owned(),
                        second: ext.uri().to_owned(),
                    });
                }
                methods.push(m);
            }
        }
        let index = exts.iter().enumerate().map(|(i, e)| (e.uri(), i)).collect();
        let entries = exts
            .into_iter()
            .zip(dependencies)
            .map(|(ext, dependencies)| {
                Arc::new(Entry {
                    uri: ext.uri(),
                    ext,
                    counters: Counters::default(),
                    dependencies,
                })
            })
            .collect();
        Ok(Self {
            inner: Arc::new(SetInner {
                entries,
                index,
                methods,
                recent: Mutex::new(Vec::with_capacity(RECENT_VALUES)),
            }),
        })
    }

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

/// v0.3 JSON-RPC method names, reserved too.
const LEGACY_METHODS: &[&str] = &[
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
    "agent/getAuthenticatedExtendedCard",
];
