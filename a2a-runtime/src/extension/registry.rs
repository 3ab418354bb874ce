//! Collecting extensions: compile-time registration (`inventory`), explicit ones from the
//! builder, and the resolved, ordered [`ExtensionSet`] that negotiates every request.

use std::sync::Arc;

use std::sync::atomic::{AtomicU64, Ordering};

use super::dependencies::Dependencies;
use super::hooks::{DynExtension, Extension, Reply};
use super::method::MethodEntry;
use super::negotiated::{Activation, Negotiated};
use crate::core::{A2aRequest, Operation, RequestContext};
use crate::error::A2aError;
use crate::types::{AgentExtension, StreamResponse, TaskStatus};

/// One `#[a2a_extension]` type linked into the binary. Emitted by the attribute.
#[derive(Debug)]
pub struct ExtensionRegistration {
    /// The URI.
    pub uri: &'static str,
    /// The type's path.
    pub type_name: &'static str,
    /// The module it was declared in.
    pub module_path: &'static str,
    /// Its default value, when it implements `Default` (linked extensions need one).
    pub linked: fn() -> Option<Box<dyn DynExtension>>,
}

inventory::collect!(ExtensionRegistration);

/// Parses `A2A-Extensions` values (repeated headers allowed): comma-separated, whitespace
/// trimmed, empty items and duplicates dropped, first-seen order kept.
///
/// ```
/// let uris = a2a_runtime::extension::parse_extensions_header(["https://a/v1, https://b/v1", "https://a/v1"]);
/// assert_eq!(uris, ["https://a/v1", "https://b/v1"]);
/// ```
pub fn parse_extensions_header<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut uris: Vec<String> = Vec::new();
    for value in values {
        for item in value.split(',') {
            let item = item.trim();
            if !item.is_empty() && !uris.iter().any(|u| u == item) {
                uris.push(item.to_owned());
            }
        }
    }
    uris
}

/// Why the configured extensions cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two different types declare one URI.
    #[error(
        "two extensions declare the URI {uri}: {first} and {second}; keep one (or .exclude one of them)"
    )]
    DuplicateUri {
        /// The URI.
        uri: String,
        /// The first type.
        first: String,
        /// The second type.
        second: String,
    },
    /// An extension's required dependency is not configured.
    #[error(
        "extension {extension} requires extension {dependency}, which is not configured; add it with .extension(..)"
    )]
    MissingDependency {
        /// The extension.
        extension: String,
        /// Its missing dependency.
        dependency: String,
    },
    /// An extension method has the name of a core method.
    #[error(
        "extension {extension} declares method {method:?}, which is a core A2A method; extension methods cannot shadow core methods"
    )]
    ShadowsCoreMethod {
        /// The extension.
        extension: String,
        /// The method.
        method: String,
    },
    /// An extension method's REST path is outside `/extensions/`.
    #[error(
        "extension {extension} serves a method at {path:?}; extension REST paths must start with /extensions/"
    )]
    BadMethodPath {
        /// The extension.
        extension: String,
        /// The path.
        path: String,
    },
    /// An extension returned a method that belongs to another extension.
    #[error("extension {extension} serves method {method:?}, which belongs to extension {owner}")]
    MethodOfOtherExtension {
        /// The extension.
        extension: String,
        /// The method.
        method: String,
        /// The extension the method declares.
        owner: String,
    },
    /// Two extensions serve one method name or REST path.
    #[error("method {method:?} is served by two extensions: {first} and {second}")]
    DuplicateMethod {
        /// The method.
        method: String,
        /// The first extension.
        first: String,
        /// The second extension.
        second: String,
    },
    /// An extension's `init` failed.
    #[error("extension {uri} failed to initialize: {error}")]
    Init {
        /// The URI.
        uri: String,
        /// The error.
        error: A2aError,
    },
}

/// The extensions linked into this binary with `#[a2a_extension]` (excluding those that ship
/// inside a2a-runtime, which are only ever enabled explicitly).
#[derive(Debug)]
pub struct ExtensionRegistry {
    entries: Vec<&'static ExtensionRegistration>,
}

impl ExtensionRegistry {
    /// Every linked registration, sorted by URI.
    pub fn linked() -> Self {
        let mut entries: Vec<&'static ExtensionRegistration> =
            inventory::iter::<ExtensionRegistration>
                .into_iter()
                .filter(|r| !is_builtin(r.module_path))
                .collect();
        entries.sort_by(|a, b| a.uri.cmp(b.uri).then(a.type_name.cmp(b.type_name)));
        Self { entries }
    }

    /// The registrations.
    pub fn iter(&self) -> impl Iterator<Item = &'static ExtensionRegistration> + '_ {
        self.entries.iter().copied()
    }
}

fn is_builtin(module_path: &str) -> bool {
    module_path == "a2a_runtime" || module_path.starts_with("a2a_runtime::")
}

/// How a builder chooses its extensions.
#[derive(Default)]
pub(crate) struct ExtensionConfig {
    pub(crate) explicit: Vec<Box<dyn DynExtension>>,
    pub(crate) only: Option<Vec<String>>,
    pub(crate) exclude: Vec<String>,
    pub(crate) linked: bool,
    /// Refuse a set that lacks a required dependency (servers); clients only send its URI.
    pub(crate) require_dependencies: bool,
}

impl ExtensionConfig {
    pub(crate) fn new() -> Self {
        Self {
            linked: true,
            require_dependencies: true,
            ..Self::default()
        }
    }

    pub(crate) fn add<E: Extension>(&mut self, value: E) {
        self.explicit.push(value.__into_dyn());
    }

    /// Resolves the final, ordered set: explicit extensions in the order given, then linked
    /// ones (sorted by URI) not given explicitly; narrowed by `only`/`exclude`; initialized.
    pub(crate) fn resolve(self) -> Result<ExtensionSet, RegistryError> {
        let mut chosen: Vec<Box<dyn DynExtension>> = Vec::new();
        let push = |ext: Box<dyn DynExtension>,
                    chosen: &mut Vec<Box<dyn DynExtension>>|
         -> Result<(), RegistryError> {
            if let Some(existing) = chosen.iter().find(|e| e.uri() == ext.uri()) {
                if existing.type_name() == ext.type_name() {
                    return Ok(());
                }
                return Err(RegistryError::DuplicateUri {
                    uri: ext.uri().to_owned(),
                    first: existing.type_name().to_owned(),
                    second: ext.type_name().to_owned(),
                });
            }
            chosen.push(ext);
            Ok(())
        };
        for ext in self.explicit {
            push(ext, &mut chosen)?;
        }
        if self.linked {
            let registry = ExtensionRegistry::linked();
            // Duplicate URIs among linked types are an error even when neither is explicit.
            for reg in registry.iter() {
                if let Some(other) = registry
                    .iter()
                    .find(|o| o.uri == reg.uri && o.type_name != reg.type_name)
                {
                    let explicit = chosen.iter().any(|c| c.uri() == reg.uri);
                    let excluded = self.exclude.iter().any(|u| u == reg.uri);
                    if !explicit && !excluded {
                        let (a, b) = if reg.type_name < other.type_name {
                            (reg, other)
                        } else {
                            (other, reg)
                        };
                        return Err(RegistryError::DuplicateUri {
                            uri: reg.uri.to_owned(),
                            first: a.type_name.to_owned(),
                            second: b.type_name.to_owned(),
                        });
                    }
                }
                if let Some(ext) = (reg.linked)()
                    && !chosen
                        .iter()
                        .any(|c| c.type_name() == ext.type_name() || c.uri() == ext.uri())
                {
                    push(ext, &mut chosen)?;
                }
            }
        }
        chosen.retain(|e| {
            self.only
                .as_ref()
                .is_none_or(|only| only.iter().any(|u| u == e.uri()))
                && !self.exclude.iter().any(|u| u == e.uri())
        });
        let mut exts: Vec<Arc<dyn DynExtension>> = Vec::with_capacity(chosen.len());
        for mut ext in chosen {
            ext.init().map_err(|error| RegistryError::Init {
                uri: ext.uri().to_owned(),
                error,
            })?;
            exts.push(Arc::from(ext));
        }
        let set = ExtensionSet::from_parts(exts, self.require_dependencies)?;
        if set.is_empty() {
            tracing::info!("a2a extensions: none");
        } else {
            for e in &set.exts {
                tracing::info!(
                    uri = e.uri(),
                    r#type = e.type_name(),
                    required = e.required(),
                    hooks = e.has_hooks(),
                    "a2a extension enabled"
                );
            }
        }
        Ok(set)
    }
}

/// Counters of one extension, over the life of a server.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    activations: AtomicU64,
    skips: AtomicU64,
    refusals: AtomicU64,
    hook_errors: AtomicU64,
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

/// The configured extensions of a server (or client), in declaration order.
#[derive(Clone, Default)]
pub struct ExtensionSet {
    exts: Vec<Arc<dyn DynExtension>>,
    counters: Vec<Arc<Counters>>,
    dependencies: Vec<Dependencies>,
    methods: Vec<MethodEntry>,
}

impl std::fmt::Debug for ExtensionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.exts.iter().map(|e| e.uri()))
            .finish()
    }
}

impl ExtensionSet {
    /// Checks dependencies and methods, and builds the set.
    fn from_parts(
        exts: Vec<Arc<dyn DynExtension>>,
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
        let counters = exts.iter().map(|_| Arc::new(Counters::default())).collect();
        Ok(Self {
            exts,
            counters,
            dependencies,
            methods,
        })
    }

    /// The configured extensions, in declaration order.
    #[cfg(feature = "client")]
    pub(crate) fn iter_dyn(&self) -> impl Iterator<Item = &Arc<dyn DynExtension>> + '_ {
        self.exts.iter()
    }

    /// True when no extension is configured.
    pub fn is_empty(&self) -> bool {
        self.exts.is_empty()
    }

    /// The URIs, in declaration order.
    pub fn uris(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.exts.iter().map(|e| e.uri())
    }

    /// The URIs of the configured extensions and of their required dependencies (what a
    /// client sends in `A2A-Extensions`).
    pub fn uris_with_dependencies(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for (e, deps) in self.exts.iter().zip(&self.dependencies) {
            for uri in std::iter::once(e.uri()).chain(deps.required.iter().copied()) {
                if !out.contains(&uri) {
                    out.push(uri);
                }
            }
        }
        out
    }

    /// The card declarations, in declaration order.
    pub fn declarations(&self) -> Vec<AgentExtension> {
        self.exts.iter().map(|e| e.declaration()).collect()
    }

    /// The counters of every extension.
    pub fn metrics(&self) -> Vec<ExtensionMetrics> {
        self.exts
            .iter()
            .zip(&self.counters)
            .map(|(e, c)| ExtensionMetrics {
                uri: e.uri(),
                activations: c.activations.load(Ordering::Relaxed),
                skips: c.skips.load(Ordering::Relaxed),
                refusals: c.refusals.load(Ordering::Relaxed),
                hook_errors: c.hook_errors.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// The method named `name` (JSON-RPC), if an extension serves it.
    pub(crate) fn method(&self, name: &str) -> Option<&MethodEntry> {
        self.methods.iter().find(|m| m.method == name)
    }

    /// The method served at REST `path`, if any.
    pub(crate) fn method_at(&self, path: &str) -> Option<&MethodEntry> {
        self.methods.iter().find(|m| m.rest_path == path)
    }

    /// True when some extension adds methods.
    pub fn has_methods(&self) -> bool {
        !self.methods.is_empty()
    }

    /// The required extensions missing from `requested`: ExtensionSupportRequired naming all.
    pub fn check_required(&self, requested: &[String]) -> Result<(), A2aError> {
        let missing: Vec<String> = self
            .exts
            .iter()
            .filter(|e| e.required() && !requested.iter().any(|r| r == e.uri()))
            .map(|e| e.uri().to_owned())
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(A2aError::ExtensionSupportRequired { uris: missing })
        }
    }

    /// Activates, in declaration order, every configured extension the request named. An
    /// extension whose required dependency was not requested refuses the request, naming both.
    pub fn activate(
        &self,
        requested: Vec<String>,
        ctx: &RequestContext,
    ) -> Result<Negotiated, A2aError> {
        let mut activated = Vec::new();
        for ((ext, counters), deps) in self.exts.iter().zip(&self.counters).zip(&self.dependencies)
        {
            if !requested.iter().any(|r| r == ext.uri()) {
                continue;
            }
            if let Some(missing) = deps
                .required
                .iter()
                .find(|d| !requested.iter().any(|r| r == **d))
            {
                counters.refusals.fetch_add(1, Ordering::Relaxed);
                return Err(A2aError::ExtensionDependencyMissing {
                    extension: ext.uri().to_owned(),
                    dependency: (*missing).to_owned(),
                });
            }
            match in_span(ext.uri(), "activate", || ext.activate(&requested, ctx)) {
                Ok(Some(value)) => {
                    counters.activations.fetch_add(1, Ordering::Relaxed);
                    activated.push(Activation {
                        ext: ext.clone(),
                        value,
                        counters: counters.clone(),
                    });
                }
                Ok(None) => {
                    counters.skips.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    counters.refusals.fetch_add(1, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        Ok(Negotiated {
            requested,
            activated,
        })
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

/// Runs `f` in an `a2a_extension` debug span naming the extension and the hook — when a tracing
/// subscriber is installed and wants debug spans. Otherwise the span is not built at all: with
/// ten extensions, four hooks each per request, even disabled spans (and `tracing`'s `log`
/// fallback, when some dependency enables it) were a measurable share of a request.
fn in_span<R>(uri: &'static str, hook: &'static str, f: impl FnOnce() -> R) -> R {
    if tracing::dispatcher::has_been_set() && tracing::enabled!(tracing::Level::DEBUG) {
        tracing::debug_span!("a2a_extension", uri, hook).in_scope(f)
    } else {
        f()
    }
}

fn hook<R>(
    a: &Activation,
    name: &'static str,
    f: impl FnOnce() -> Result<R, A2aError>,
) -> Result<R, A2aError> {
    let out = in_span(a.ext.uri(), name, f);
    if out.is_err() {
        a.counters.hook_errors.fetch_add(1, Ordering::Relaxed);
    }
    out
}

impl Negotiated {
    /// Runs every activated extension's `handle_request`, in declaration order.
    pub(crate) fn handle_request(
        &self,
        req: &mut A2aRequest,
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        for a in &self.activated {
            hook(a, "handle_request", || {
                a.ext.handle_request(req, &a.value, ctx)
            })?;
        }
        Ok(())
    }

    /// Runs every activated extension's `handle_response`, in declaration order.
    pub(crate) fn handle_response(&self, reply: &mut Reply<'_>) -> Result<(), A2aError> {
        for a in &self.activated {
            hook(a, "handle_response", || {
                a.ext.handle_response(reply, &a.value)
            })?;
        }
        Ok(())
    }

    /// Runs every activated extension's `handle_event`, in declaration order.
    pub(crate) fn handle_event(&self, event: &mut StreamResponse) -> Result<(), A2aError> {
        for a in &self.activated {
            hook(a, "handle_event", || a.ext.handle_event(event, &a.value))?;
        }
        Ok(())
    }

    /// Runs every activated extension's `check_transition`, in declaration order.
    pub(crate) fn check_transition(
        &self,
        from: &TaskStatus,
        to: &TaskStatus,
    ) -> Result<(), A2aError> {
        for a in &self.activated {
            hook(a, "check_transition", || {
                a.ext.check_transition(from, to, &a.value)
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::extension::Timestamp;

    /// Counts the `a2a_extension` spans opened.
    struct Spans(Arc<AtomicUsize>);

    impl tracing::Subscriber for Spans {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            if span.metadata().name() == "a2a_extension" {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, _: &tracing::Event<'_>) {}
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    #[test]
    fn hooks_run_in_a_span_per_extension_when_a_subscriber_listens() {
        let mut config = ExtensionConfig::new();
        config.linked = false;
        config.add(Timestamp::default());
        let set = config.resolve().unwrap();
        let requested = || vec![Timestamp::URI.to_owned()];
        let ctx = crate::core::RequestContext::v1();
        // Without a subscriber: activated all the same (no span is built).
        assert_eq!(set.activate(requested(), &ctx).unwrap().activated.len(), 1);
        let spans = Arc::new(AtomicUsize::new(0));
        let negotiated = tracing::subscriber::with_default(Spans(spans.clone()), || {
            set.activate(requested(), &ctx).unwrap()
        });
        assert_eq!(negotiated.activated.len(), 1);
        assert_eq!(spans.load(Ordering::SeqCst), 1, "one activate span");
    }
}
