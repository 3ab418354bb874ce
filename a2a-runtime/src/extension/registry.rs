//! Collecting extensions: compile-time registration (`inventory`), explicit ones from the
//! builder, and the resolved, ordered [`ExtensionSet`] that negotiates every request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::RequestContext;
use super::dependencies::Dependencies;
use super::hooks::{
    DynExtension, Extension, HOOK_EVENT, HOOK_OBSERVE, HOOK_REQUEST, HOOK_RESPONSE,
    HOOK_TRANSITION, HookOutcome, Live, Reply, Slot,
};
use super::method::MethodEntry;
use super::negotiated::{Activation, Negotiated};
use crate::error::A2aError;
use crate::protocol::{A2aRequest, Operation};
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

/// How a builder chooses its extensions: explicit ones always; linked ones only when `linked`
/// is set, and never one that is `required`.
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
    #[cfg(any(feature = "server", test))]
    pub(crate) fn new() -> Self {
        Self {
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
                    // A required extension refuses every client without it: enabling one
                    // the user never named would break all of them.
                    if ext.required() {
                        tracing::info!(
                            uri = ext.uri(),
                            r#type = ext.type_name(),
                            "a2a extension linked but not enabled: it is required; add it with .extension(..)"
                        );
                        continue;
                    }
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
        for ext in &mut chosen {
            ext.init().map_err(|error| RegistryError::Init {
                uri: ext.uri().to_owned(),
                error,
            })?;
        }
        let set = ExtensionSet::from_parts(chosen, self.require_dependencies)?;
        if set.is_empty() {
            tracing::info!("a2a extensions: none");
        } else {
            let uris: Vec<&str> = set.inner.entries.iter().map(|e| e.ext.uri()).collect();
            tracing::info!(extensions = %uris.join(", "), "a2a extensions enabled");
            for e in set.inner.entries.iter().map(|e| &e.ext) {
                tracing::debug!(
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

/// The configured extensions of a server (or client), in declaration order. Cheap to clone
/// (clones share the extensions, their counters and the negotiation cache).
#[derive(Clone, Default)]
pub struct ExtensionSet {
    inner: Arc<SetInner>,
}

/// One configured extension.
///
/// Laid out with what every hook call reads (`ext`, `live`) first, so that a call touches
/// one cache line of its entry.
#[repr(C)]
pub(crate) struct Entry {
    ext: Box<dyn DynExtension>,
    /// The hooks that may do something, and those known to be implemented.
    live: Live,
    pub(super) uri: &'static str,
    counters: Counters,
    dependencies: Dependencies,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

/// A single `A2A-Extensions` value as received and what [`ExtensionSet::begin`] made of it.
type Begun = (Box<[u8]>, Arc<Negotiated>);

/// What an [`ExtensionSet`] shares between its clones and the requests it negotiated.
#[derive(Default)]
pub(crate) struct SetInner {
    entries: Vec<Arc<Entry>>,
    /// URI → position in `entries`.
    index: HashMap<&'static str, usize>,
    methods: Vec<MethodEntry>,
    /// The last single `A2A-Extensions` values negotiated (at most [`RECENT_VALUES`], the most
    /// recently used first), each with its outcome: each client of an agent tends to send the
    /// same value on every request, and a few kinds of client taking turns must not evict each
    /// other's plans on every request.
    recent: Mutex<Vec<Begun>>,
}

/// How many `A2A-Extensions` values [`SetInner::recent`] keeps.
const RECENT_VALUES: usize = 8;

/// What activating a requested list takes: the requested, configured extensions in
/// declaration order, each with the first required dependency that was not requested.
#[derive(Debug)]
pub(crate) struct Plan {
    steps: Vec<(usize, Option<&'static str>)>,
    /// Every step activated: the list a request shares when none is skipped.
    all: Arc<[Activation]>,
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
    fn from_parts(
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
                    live: Live::new(ext.hooks()),
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

    /// The counters of every extension.
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

    /// Reads the `A2A-Extensions` header values (`values`: every value of `A2A-Extensions`,
    /// then of `X-A2A-Extensions`, as received) and checks the required extensions: the
    /// negotiation's start, with nothing activated yet (`None` when no value was sent; a value
    /// that is not UTF-8 counts as not sent). The outcome for a single value is cached and
    /// shared by the next requests that send the same value.
    pub(crate) fn begin<'a, V: AsRef<[u8]> + ?Sized + 'a>(
        &self,
        values: impl IntoIterator<Item = &'a V>,
    ) -> Result<Option<Arc<Negotiated>>, A2aError> {
        let mut values = values.into_iter().map(AsRef::as_ref);
        let Some(first) = values.next() else {
            return self.begin_none();
        };
        let Some(second) = values.next() else {
            return self.begin_value(first);
        };
        let texts: Vec<&str> = [first, second]
            .into_iter()
            .chain(values)
            .filter_map(|v| std::str::from_utf8(v).ok())
            .collect();
        if texts.is_empty() {
            return self.begin_none();
        }
        self.begun(super::parse_extensions_header(texts)?).map(Some)
    }

    /// [`begin`](Self::begin) when no value was sent.
    fn begin_none(&self) -> Result<Option<Arc<Negotiated>>, A2aError> {
        self.check_required(&[])?;
        Ok(None)
    }

    /// [`begin`](Self::begin) for a single header value, through the cache of recent values
    /// (compared as received: a value is checked to be UTF-8 once, when it is first planned).
    fn begin_value(&self, value: &[u8]) -> Result<Option<Arc<Negotiated>>, A2aError> {
        let lock = || {
            self.inner
                .recent
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        {
            let mut recent = lock();
            // The usual request: the same value as the last one, first in the list.
            if let Some(i) = recent.iter().position(|(raw, _)| **raw == *value) {
                if i > 0
                    && let Some(used) = recent.get_mut(..=i)
                {
                    used.rotate_right(1);
                }
                if let Some((_, begun)) = recent.first() {
                    return Ok(Some(begun.clone()));
                }
            }
        }
        let Ok(text) = std::str::from_utf8(value) else {
            return self.begin_none();
        };
        let begun = self.begun(super::parse_extensions_header([text])?)?;
        let mut recent = lock();
        // Planned by another request meanwhile: that one is kept (and this one's plan goes
        // unused).
        if let Some((_, theirs)) = recent.iter().find(|(raw, _)| **raw == *value) {
            return Ok(Some(theirs.clone()));
        }
        if recent.len() >= RECENT_VALUES {
            recent.pop();
        }
        recent.insert(0, (value.into(), begun.clone()));
        Ok(Some(begun))
    }

    /// Checks the required extensions and plans the activation of `requested`.
    fn begun(&self, requested: Vec<String>) -> Result<Arc<Negotiated>, A2aError> {
        self.check_required(&requested)?;
        let plan = self.plan(&requested);
        Ok(Arc::new(Negotiated {
            requested: requested.into(),
            activated: Arc::default(),
            values: Mutex::default(),
            requesting: AtomicBool::new(false),
            hooks: 0,
            spans: false,
            plan: Some(Arc::new(plan)),
        }))
    }

    /// The requested, configured extensions in declaration order, with the first required
    /// dependency each lacks.
    fn plan(&self, requested: &[String]) -> Plan {
        let mut positions: Vec<usize> = requested
            .iter()
            .filter_map(|r| self.inner.index.get(r.as_str()).copied())
            .collect();
        positions.sort_unstable();
        positions.dedup();
        let steps: Vec<(usize, Option<&'static str>)> = positions
            .into_iter()
            .map(|i| {
                let missing = self.inner.entries.get(i).and_then(|e| {
                    e.dependencies
                        .required
                        .iter()
                        .find(|d| !requested.iter().any(|r| r == **d))
                        .copied()
                });
                (i, missing)
            })
            .collect();
        let all = steps
            .iter()
            .filter_map(|&(index, _)| Some(Activation(self.inner.entries.get(index)?.clone())))
            .collect();
        Plan { steps, all }
    }

    /// Activates, in declaration order, every configured extension the request named. An
    /// extension whose required dependency was not requested refuses the request, naming both.
    pub fn activate(
        &self,
        requested: Vec<String>,
        ctx: &RequestContext,
    ) -> Result<Negotiated, A2aError> {
        let plan = self.plan(&requested);
        self.activate_each(requested.into(), &plan, ctx, spans_wanted())
    }

    /// Activates what `begun` (from [`begin`](Self::begin), or built by hand) requested.
    pub(crate) fn activate_begun(
        &self,
        begun: &Negotiated,
        ctx: &RequestContext,
    ) -> Result<Arc<Negotiated>, A2aError> {
        let spans = spans_wanted();
        let negotiated = match &begun.plan {
            Some(plan) => self.activate_each(begun.requested.clone(), plan, ctx, spans),
            None => {
                let plan = self.plan(&begun.requested);
                self.activate_each(begun.requested.clone(), &plan, ctx, spans)
            }
        };
        negotiated.map(Arc::new)
    }

    /// Activates the steps of `plan` in order: each extension's `activate` decides.
    fn activate_each(
        &self,
        requested: Arc<[String]>,
        plan: &Plan,
        ctx: &RequestContext,
        spans: bool,
    ) -> Result<Negotiated, A2aError> {
        let mut values = Vec::with_capacity(plan.steps.len());
        // Only built once an extension is skipped: otherwise the plan's list is shared.
        let mut partial: Option<Vec<Activation>> = None;
        let mut hooks = 0;
        for (step, &(index, missing)) in plan.steps.iter().enumerate() {
            let Some(e) = self.inner.entries.get(index) else {
                continue;
            };
            if let Some(missing) = missing {
                e.counters.refusals.fetch_add(1, Ordering::Relaxed);
                return Err(A2aError::ExtensionDependencyMissing {
                    extension: e.uri.to_owned(),
                    dependency: missing.to_owned(),
                });
            }
            match in_span_if(spans, e.uri, "activate", || e.ext.activate(&requested, ctx)) {
                Ok(Some(value)) => {
                    e.counters.activations.fetch_add(1, Ordering::Relaxed);
                    hooks |= e.live.hooks();
                    values.push(value);
                    if let Some(partial) = &mut partial {
                        partial.push(Activation(e.clone()));
                    }
                }
                Ok(None) => {
                    e.counters.skips.fetch_add(1, Ordering::Relaxed);
                    if partial.is_none() {
                        partial = Some(plan.all.get(..step).unwrap_or_default().to_vec());
                    }
                }
                Err(err) => {
                    e.counters.refusals.fetch_add(1, Ordering::Relaxed);
                    return Err(err);
                }
            }
        }
        Ok(Negotiated {
            requested,
            activated: partial.map_or_else(|| plan.all.clone(), Arc::from),
            values: Mutex::new(values),
            requesting: AtomicBool::new(false),
            hooks,
            spans,
            plan: None,
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

/// True when a tracing subscriber is installed and wants debug spans (asked once per series of
/// hook calls). Without a subscriber this is one load; asking one is out of line.
#[inline(always)]
fn spans_wanted() -> bool {
    tracing::dispatcher::has_been_set() && debug_enabled()
}

/// Whether the installed subscriber wants debug spans.
#[cold]
#[inline(never)]
fn debug_enabled() -> bool {
    tracing::enabled!(tracing::Level::DEBUG)
}

/// Runs `f` in an `a2a_extension` debug span naming the extension and the hook when `wanted`
/// ([`spans_wanted`]). Otherwise the span is not built at all: with ten extensions, four hooks
/// each per request, even disabled spans (and `tracing`'s `log` fallback, when some dependency
/// enables it) were a measurable share of a request.
#[inline]
fn in_span_if<R>(wanted: bool, uri: &'static str, hook: &'static str, f: impl FnOnce() -> R) -> R {
    if wanted {
        tracing::debug_span!("a2a_extension", uri, hook).in_scope(f)
    } else {
        f()
    }
}

/// Counts a hook's error on its extension and unboxes it (here, so that the unboxing stays
/// out of the hook loops).
#[cold]
#[inline(never)]
#[allow(clippy::boxed_local)]
fn hook_failed(e: &Entry, err: Box<A2aError>) -> A2aError {
    e.counters.hook_errors.fetch_add(1, Ordering::Relaxed);
    *err
}

/// Runs `hook` (a `HOOK_*` bit, named `name`) of every extension in `activated` (in
/// declaration order) that may implement it, each on its value in `values` (`values[i]`
/// belongs to `activated[i]`); a hook found to be the default body is not called again.
///
/// The loop without spans is all this function holds (the one with spans, and the error
/// path, are out of line): it is what every request with extensions runs, a few cache lines
/// of code.
#[inline]
fn run_hooks_on(
    (activated, spans): (&[Activation], bool),
    values: &mut [Slot],
    (hook, name): (u8, &'static str),
    mut f: impl FnMut(&dyn DynExtension, &mut Slot, &Live) -> HookOutcome,
) -> Result<(), A2aError> {
    if spans {
        return run_hooks_in_spans(activated, values, (hook, name), f);
    }
    for (a, value) in activated.iter().zip(values) {
        if a.0.live.hooks() & hook != 0
            && let Err(err) = f(a.0.ext.as_ref(), value, &a.0.live)
        {
            return Err(hook_failed(&a.0, err));
        }
    }
    Ok(())
}

/// [`run_hooks_on`] with each call in a debug span ([`in_span_if`]).
#[cold]
#[inline(never)]
fn run_hooks_in_spans(
    activated: &[Activation],
    values: &mut [Slot],
    (hook, name): (u8, &'static str),
    mut f: impl FnMut(&dyn DynExtension, &mut Slot, &Live) -> HookOutcome,
) -> Result<(), A2aError> {
    for (a, value) in activated.iter().zip(values) {
        let e = &a.0;
        if e.live.hooks() & hook != 0 {
            in_span_if(true, e.uri, name, || f(e.ext.as_ref(), value, &e.live))
                .map_err(|err| hook_failed(e, err))?;
        }
    }
    Ok(())
}

/// The response phases of [`Negotiated::handle_response`] on `values`: the hooks that may
/// change `reply`, then those that read it (`hooks`: the negotiation's mask).
fn respond_on(
    entries: (&[Activation], bool),
    hooks: u8,
    values: &mut [Slot],
    reply: &mut Reply<'_>,
) -> Result<(), A2aError> {
    if hooks & HOOK_RESPONSE != 0 {
        run_hooks_on(
            entries,
            values,
            (HOOK_RESPONSE, "handle_response"),
            |ext, value, live| ext.handle_response(reply, value, live),
        )?;
    }
    if hooks & HOOK_OBSERVE != 0 {
        run_hooks_on(
            entries,
            values,
            (HOOK_OBSERVE, "observe_response"),
            |ext, value, live| ext.observe_response(reply, value, live),
        )?;
    }
    Ok(())
}

impl Negotiated {
    /// The activated extensions, when some of them may implement `hook` (so that a phase
    /// nobody hooks takes no lock).
    fn hooked(&self, hook: u8) -> Option<(&[Activation], bool)> {
        (self.hooks & hook != 0).then_some((&self.activated[..], self.spans))
    }

    /// Runs `hook` of the activated extensions with the value table locked once for all of
    /// them. Only for hooks that cannot reach this negotiation (they get no context).
    fn run_hooks(
        &self,
        hook: (u8, &'static str),
        f: impl FnMut(&dyn DynExtension, &mut Slot, &Live) -> HookOutcome,
    ) -> Result<(), A2aError> {
        let Some(entries) = self.hooked(hook.0) else {
            return Ok(());
        };
        run_hooks_on(entries, &mut self.lock_values(), hook, f)
    }

    /// Runs every activated extension's `handle_request`, in declaration order, with the value
    /// table locked once for all of them. Meanwhile [`extension`](Negotiated::extension) answers
    /// `None` (a hook reading values through `ctx`, which may hold this negotiation, would
    /// otherwise wait for itself).
    pub(crate) fn handle_request(
        &self,
        req: &mut A2aRequest,
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        let Some(entries) = self.hooked(HOOK_REQUEST) else {
            return Ok(());
        };
        let _requesting = self.requesting();
        run_hooks_on(
            entries,
            &mut self.lock_values(),
            (HOOK_REQUEST, "handle_request"),
            |ext, value, live| ext.handle_request(req, value, ctx, live),
        )
    }

    /// True when some activated extension may change a unary result (`handle_response`).
    pub(crate) fn hooks_responses(&self) -> bool {
        self.hooks & HOOK_RESPONSE != 0
    }

    /// A negotiation as if an activated extension hooked responses (tests).
    #[cfg(test)]
    pub(crate) fn hooking_responses() -> Self {
        Self {
            hooks: HOOK_RESPONSE,
            ..Self::default()
        }
    }

    /// True when some activated extension may read or change results (`handle_response`,
    /// `observe_response`).
    pub(crate) fn sees_responses(&self) -> bool {
        self.hooks & (HOOK_RESPONSE | HOOK_OBSERVE) != 0
    }

    /// A negotiation as if an activated extension only observed responses (tests).
    #[cfg(test)]
    pub(crate) fn observing_responses() -> Self {
        Self {
            hooks: HOOK_OBSERVE,
            ..Self::default()
        }
    }

    /// Runs every activated extension's `handle_response`, then every one's
    /// `observe_response` (each phase in declaration order), with the value table locked once
    /// for both.
    pub(crate) fn handle_response(&self, reply: &mut Reply<'_>) -> Result<(), A2aError> {
        if !self.sees_responses() {
            return Ok(());
        }
        let entries = (&self.activated[..], self.spans);
        respond_on(entries, self.hooks, &mut self.lock_values(), reply)
    }

    /// [`handle_response`](Self::handle_response) for a negotiation nobody else holds: no
    /// lock.
    pub(crate) fn handle_response_mut(&mut self, reply: &mut Reply<'_>) -> Result<(), A2aError> {
        if !self.sees_responses() {
            return Ok(());
        }
        let values = self
            .values
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        respond_on((&self.activated, self.spans), self.hooks, values, reply)
    }

    /// Runs every activated extension's `handle_event`, in declaration order.
    pub(crate) fn handle_event(&self, event: &mut StreamResponse) -> Result<(), A2aError> {
        self.run_hooks((HOOK_EVENT, "handle_event"), |ext, value, live| {
            ext.handle_event(event, value, live)
        })
    }

    /// Runs every activated extension's `check_transition`, in declaration order.
    pub(crate) fn check_transition(
        &self,
        from: &TaskStatus,
        to: &TaskStatus,
    ) -> Result<(), A2aError> {
        self.run_hooks((HOOK_TRANSITION, "check_transition"), |ext, value, live| {
            ext.check_transition(from, to, value, live)
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::extension::hooks::HOOK_ALL;
    use crate::extension::{Activate, Timestamp};

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
        let ctx = crate::extension::RequestContext::v1();
        // Without a subscriber: activated all the same (no span is built).
        assert_eq!(set.activate(requested(), &ctx).unwrap().activated.len(), 1);
        let spans = Arc::new(AtomicUsize::new(0));
        let negotiated = tracing::subscriber::with_default(Spans(spans.clone()), || {
            set.activate(requested(), &ctx).unwrap()
        });
        assert_eq!(negotiated.activated.len(), 1);
        assert_eq!(spans.load(Ordering::SeqCst), 1, "one activate span");
    }

    /// A plain extension.
    #[crate::a2a_extension(uri = "https://example.com/test/a/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct A {}

    /// Another plain extension.
    #[crate::a2a_extension(uri = "https://example.com/test/b/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct B {}

    /// A required extension.
    #[crate::a2a_extension(uri = "https://example.com/test/r/v1", required = true)]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct R {}

    /// `handle_request` calls.
    static COUNTED_REQUESTS: AtomicUsize = AtomicUsize::new(0);

    /// Implements `handle_request` (counting calls, changing nothing) and nothing else.
    #[crate::a2a_extension(uri = "https://example.com/test/counted/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Counted {}

    impl crate::extension::ExtensionHooks for Counted {
        type Activation = u32;

        fn handle_request(
            &self,
            _: &mut A2aRequest,
            seen: &mut u32,
            _: &RequestContext,
        ) -> Result<(), A2aError> {
            *seen += 1;
            COUNTED_REQUESTS.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    fn set_of(exts: Vec<Box<dyn DynExtension>>) -> ExtensionSet {
        let mut config = ExtensionConfig::new();
        config.linked = false;
        config.explicit = exts;
        config.resolve().unwrap()
    }

    /// Negotiates one request that sent `values` in `A2A-Extensions`.
    fn negotiate(set: &ExtensionSet, values: &[&str]) -> Result<Arc<Negotiated>, A2aError> {
        let ctx = RequestContext::v1();
        let begun = set.begin(values.iter().copied())?.unwrap_or_default();
        set.activate_begun(&begun, &ctx)
    }

    fn uris(n: &Negotiated) -> Vec<&'static str> {
        n.activated_uris().collect()
    }

    #[test]
    fn a_header_value_that_is_not_utf8_counts_as_not_sent() {
        let set = set_of(vec![A {}.__into_dyn()]);
        let latin1: &[u8] = b"https://example.com/test/a/v1, caf\xe9";
        assert!(set.begin([latin1]).unwrap().is_none());
        // Asked again (nothing was cached for it), and among several values it is skipped.
        assert!(set.begin([latin1]).unwrap().is_none());
        let begun = set.begin([latin1, A::URI.as_bytes()]).unwrap().unwrap();
        assert_eq!(&*begun.requested, [A::URI]);
        // Not sent: a required extension is missing.
        let required = set_of(vec![R {}.__into_dyn()]);
        assert!(matches!(
            required.begin([latin1]),
            Err(A2aError::ExtensionSupportRequired { .. })
        ));
    }

    #[test]
    fn a_header_value_after_a_cached_one_gets_its_own_negotiation() {
        let set = set_of(vec![A {}.__into_dyn(), B {}.__into_dyn()]);
        let (a, b) = (A::URI, B::URI);
        let first = set.begin([a]).unwrap().unwrap();
        let again = set.begin([a]).unwrap().unwrap();
        assert!(
            Arc::ptr_eq(&first, &again),
            "the same value is negotiated once"
        );
        assert_eq!(&*again.requested, [a]);
        assert_eq!(uris(&negotiate(&set, &[a]).unwrap()), [a]);

        let both = format!("{b}, {a}");
        let n = negotiate(&set, &[&both]).unwrap();
        assert_eq!(&*n.requested, [b, a]);
        assert_eq!(uris(&n), [a, b], "declaration order");
        assert_eq!(uris(&negotiate(&set, &[b]).unwrap()), [b]);
        assert_eq!(uris(&negotiate(&set, &[a]).unwrap()), [a]);
        // Repeated headers are merged (not cached), and no header activates nothing.
        let n = negotiate(&set, &[b, a, b]).unwrap();
        assert_eq!(&*n.requested, [b, a]);
        assert_eq!(uris(&n), [a, b]);
        assert!(set.begin::<str>([]).unwrap().is_none());
        assert!(uris(&negotiate(&set, &[]).unwrap()).is_empty());
        assert_eq!(
            set.metrics()
                .iter()
                .map(|m| m.activations)
                .collect::<Vec<_>>(),
            [4, 3]
        );
    }

    #[test]
    fn clients_taking_turns_keep_their_plans_and_an_evicted_plan_loses_no_count() {
        let set = set_of(vec![A {}.__into_dyn(), B {}.__into_dyn()]);
        let (a, both) = (A::URI.to_owned(), format!("{}, {}", A::URI, B::URI));
        let first_a = set.begin([a.as_str()]).unwrap().unwrap();
        let first_both = set.begin([both.as_str()]).unwrap().unwrap();
        for _ in 0..3 {
            let again_a = set.begin([a.as_str()]).unwrap().unwrap();
            let again_both = set.begin([both.as_str()]).unwrap().unwrap();
            assert!(Arc::ptr_eq(&again_a, &first_a), "A's plan was kept");
            assert!(
                Arc::ptr_eq(&again_both, &first_both),
                "A, B's plan was kept"
            );
        }
        // More distinct values than are kept (the same list, spaced differently): the least
        // recently used goes, and the requests counted on its plan stay counted.
        let values: Vec<String> = (0..RECENT_VALUES)
            .map(|i| format!("{}{}", A::URI, " ".repeat(i + 1)))
            .collect();
        for v in &values {
            negotiate(&set, &[v]).unwrap();
            negotiate(&set, &[v]).unwrap();
        }
        let again_a = set.begin([a.as_str()]).unwrap().unwrap();
        assert!(!Arc::ptr_eq(&again_a, &first_a), "evicted, planned anew");
        let last = values.last().unwrap().as_str();
        let kept = set.begin([last]).unwrap().unwrap();
        assert!(Arc::ptr_eq(&kept, &set.begin([last]).unwrap().unwrap()));
        let activations: Vec<u64> = set.metrics().iter().map(|m| m.activations).collect();
        assert_eq!(activations, [2 * RECENT_VALUES as u64, 0]);
    }

    #[test]
    fn a_cached_value_does_not_excuse_a_missing_required_extension() {
        let set = set_of(vec![R {}.__into_dyn(), A {}.__into_dyn()]);
        let with_r = format!("{}, {}", A::URI, R::URI);
        assert_eq!(
            uris(&negotiate(&set, &[&with_r]).unwrap()),
            [R::URI, A::URI]
        );
        for values in [&[A::URI][..], &[], &[" "]] {
            match negotiate(&set, values) {
                Err(A2aError::ExtensionSupportRequired { uris }) => assert_eq!(uris, [R::URI]),
                other => panic!("{values:?}: {other:?}"),
            }
        }
        assert_eq!(
            uris(&negotiate(&set, &[&with_r]).unwrap()),
            [R::URI, A::URI]
        );
    }

    #[test]
    fn hooks_left_at_their_default_are_skipped_and_implemented_ones_always_run() {
        let set = set_of(vec![Counted {}.__into_dyn(), A {}.__into_dyn()]);
        let entries = &set.inner.entries;
        assert_eq!(entries[0].live.hooks(), HOOK_ALL);
        assert_eq!(entries[1].live.hooks(), 0, "data only");
        let ctx = RequestContext::v1();
        let mut req = A2aRequest::GetTask(Default::default());
        let mut event = StreamResponse::Task(Default::default());
        let before = COUNTED_REQUESTS.load(Ordering::SeqCst);
        for round in 1..=3 {
            let n = negotiate(&set, &[Counted::URI]).unwrap();
            if round > 1 {
                // The event hook was found to be the default in round 1.
                assert_eq!(n.hooks & HOOK_EVENT, 0, "round {round}");
                assert_eq!(n.hooks & HOOK_REQUEST, HOOK_REQUEST, "round {round}");
            }
            n.handle_request(&mut req, &ctx).unwrap();
            n.handle_event(&mut event).unwrap();
            assert_eq!(n.extension::<Counted>(), Some(1), "round {round}");
        }
        assert_eq!(COUNTED_REQUESTS.load(Ordering::SeqCst) - before, 3);
        // handle_event is the default body: found out on its first call, then skipped.
        assert_eq!(entries[0].live.hooks(), HOOK_ALL & !HOOK_EVENT);
    }

    /// Counts its response hook calls in its activation value.
    #[crate::a2a_extension(uri = "https://example.com/test/replies/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Replies {}

    impl crate::extension::ExtensionHooks for Replies {
        type Activation = u32;

        fn handle_response(&self, _: &mut Reply<'_>, seen: &mut u32) -> Result<(), A2aError> {
            *seen += 1;
            Ok(())
        }
    }

    /// Records the id of every task it observes in its activation value.
    #[crate::a2a_extension(uri = "https://example.com/test/observer/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Observer {}

    impl crate::extension::ExtensionHooks for Observer {
        type Activation = String;

        fn observe_response(&self, reply: &Reply<'_>, seen: &mut String) -> Result<(), A2aError> {
            if let Reply::Task(task) = reply {
                seen.push_str(task.id.as_str());
            }
            Ok(())
        }
    }

    /// Renames every task it is given.
    #[crate::a2a_extension(uri = "https://example.com/test/renamer/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Renamer {}

    impl crate::extension::ExtensionHooks for Renamer {
        type Activation = ();

        fn handle_response(&self, reply: &mut Reply<'_>, _: &mut ()) -> Result<(), A2aError> {
            if let Reply::Task(task) = reply {
                task.id = format!("renamed-{}", task.id.as_str()).into();
            }
            Ok(())
        }
    }

    /// Skips its activation for the tenant `skip`; its value is a string.
    #[crate::a2a_extension(uri = "https://example.com/test/skipper/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Skipper {}

    impl crate::extension::ExtensionHooks for Skipper {
        type Activation = String;

        fn activate(&self, _: &[String], ctx: &RequestContext) -> Activate<String> {
            if ctx.tenant == "skip" {
                Activate::Skip
            } else {
                Activate::Activated("on".into())
            }
        }
    }

    /// In its request hook, records what the context shows of `Counted`'s value.
    #[crate::a2a_extension(uri = "https://example.com/test/peeker/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Peeker {}

    impl crate::extension::ExtensionHooks for Peeker {
        type Activation = Option<Option<u32>>;

        fn handle_request(
            &self,
            _: &mut A2aRequest,
            seen: &mut Option<Option<u32>>,
            ctx: &RequestContext,
        ) -> Result<(), A2aError> {
            *seen = Some(ctx.extension::<Counted>());
            Ok(())
        }
    }

    /// Its request hook panics.
    #[crate::a2a_extension(uri = "https://example.com/test/panicker/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Panicker {}

    impl crate::extension::ExtensionHooks for Panicker {
        type Activation = u32;

        fn activate(&self, _: &[String], _: &RequestContext) -> Activate<u32> {
            Activate::Activated(7)
        }

        fn handle_request(
            &self,
            _: &mut A2aRequest,
            _: &mut u32,
            _: &RequestContext,
        ) -> Result<(), A2aError> {
            panic!("a request hook that panics");
        }
    }

    #[test]
    fn values_are_readable_again_after_a_request_hook_panicked() {
        let set = set_of(vec![Peeker {}.__into_dyn(), Panicker {}.__into_dyn()]);
        let both = format!("{}, {}", Peeker::URI, Panicker::URI);
        let begun = set.begin([both.as_str()]).unwrap().unwrap();
        let mut ctx = RequestContext::v1();
        let n = set.activate_begun(&begun, &ctx).unwrap();
        ctx.extensions = n.clone();
        let mut req = A2aRequest::GetTask(Default::default());
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            n.handle_request(&mut req, &ctx)
        }));
        assert!(panicked.is_err());
        // Not stuck in "the request hooks are running", and the poisoned table is still read.
        assert_eq!(n.extension::<Panicker>(), Some(7));
        assert_eq!(n.extension::<Peeker>(), Some(Some(None)));
    }

    #[test]
    fn values_stay_with_their_extension_when_one_is_skipped_and_request_hooks_do_not_wait_for_themselves()
     {
        let set = set_of(vec![
            Counted {}.__into_dyn(),
            Skipper {}.__into_dyn(),
            Peeker {}.__into_dyn(),
        ]);
        let all = format!("{}, {}, {}", Peeker::URI, Skipper::URI, Counted::URI);
        let mut req = A2aRequest::GetTask(Default::default());
        for tenant in ["", "skip", ""] {
            let mut ctx = RequestContext::v1();
            ctx.tenant = tenant.into();
            let begun = set.begin([all.as_str()]).unwrap().unwrap();
            let n = set.activate_begun(&begun, &ctx).unwrap();
            // The hooks get a context holding this very negotiation.
            ctx.extensions = n.clone();
            n.handle_request(&mut req, &ctx).unwrap();
            let expected = if tenant == "skip" {
                vec![Counted::URI, Peeker::URI]
            } else {
                vec![Counted::URI, Skipper::URI, Peeker::URI]
            };
            assert_eq!(uris(&n), expected, "tenant {tenant:?}");
            assert_eq!(n.extension::<Counted>(), Some(1));
            assert_eq!(
                n.extension::<Skipper>(),
                (tenant != "skip").then(|| "on".to_owned())
            );
            // Inside the request hooks the hooks hold the table: None, not a deadlock.
            assert_eq!(n.extension::<Peeker>(), Some(Some(None)));
        }
        // Requests that activate all they asked for share one list; a skip gets its own.
        let lists: Vec<Arc<[Activation]>> = ["", "skip", ""]
            .into_iter()
            .map(|tenant| {
                let mut ctx = RequestContext::v1();
                ctx.tenant = tenant.into();
                let begun = set.begin([all.as_str()]).unwrap().unwrap();
                set.activate_begun(&begun, &ctx).unwrap().activated.clone()
            })
            .collect();
        assert!(Arc::ptr_eq(&lists[0], &lists[2]));
        assert!(!Arc::ptr_eq(&lists[0], &lists[1]));
        // Activations and skips are counted per extension, whatever the cache holds.
        let counts = |set: &ExtensionSet| -> Vec<(u64, u64)> {
            set.metrics()
                .iter()
                .map(|m| (m.activations, m.skips))
                .collect()
        };
        assert_eq!(counts(&set), [(6, 0), (4, 2), (6, 0)]);
        // A new header value is cached beside it: the counts add up across cached plans.
        negotiate(&set, &[Counted::URI]).unwrap();
        assert_eq!(counts(&set), [(7, 0), (4, 2), (6, 0)]);
    }

    /// Its response hook fails.
    #[crate::a2a_extension(uri = "https://example.com/test/failing/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Failing {}

    impl crate::extension::ExtensionHooks for Failing {
        type Activation = ();

        fn handle_response(&self, _: &mut Reply<'_>, _: &mut ()) -> Result<(), A2aError> {
            Err(A2aError::invalid_field(
                "reply",
                "refused by the failing extension",
            ))
        }
    }

    #[test]
    fn a_hook_error_stops_the_phase_and_is_counted_on_its_extension() {
        let set = set_of(vec![Failing {}.__into_dyn(), Replies {}.__into_dyn()]);
        let mut task = crate::types::Task::default();
        let n = negotiate(&set, &[Failing::URI, Replies::URI]).unwrap();
        let err = n.handle_response(&mut Reply::Task(&mut task)).unwrap_err();
        assert!(
            err.to_string().contains("refused by the failing extension"),
            "{err}"
        );
        // The hooks after the failing one did not run.
        assert_eq!(n.extension::<Replies>(), Some(0));
        let errors: Vec<u64> = set.metrics().iter().map(|m| m.hook_errors).collect();
        assert_eq!(errors, [1, 0]);
    }

    #[test]
    fn response_hooks_change_the_activation_value_alike_with_and_without_the_lock() {
        let set = set_of(vec![Replies {}.__into_dyn(), Counted {}.__into_dyn()]);
        let mut task = crate::types::Task::default();
        let mut n = negotiate(&set, &[Replies::URI, Counted::URI]).unwrap();
        // Shared (locked), then exclusive (`Mutex::get_mut`), then shared again.
        n.handle_response(&mut Reply::Task(&mut task)).unwrap();
        Arc::get_mut(&mut n)
            .unwrap()
            .handle_response_mut(&mut Reply::Task(&mut task))
            .unwrap();
        n.handle_response(&mut Reply::Task(&mut task)).unwrap();
        assert_eq!(n.extension::<Replies>(), Some(3));
        // Counted leaves handle_response at its default: skipped from then on, value untouched.
        assert_eq!(n.extension::<Counted>(), Some(0));
        assert_eq!(set.inner.entries[1].live.hooks() & HOOK_RESPONSE, 0);
    }

    #[test]
    fn observers_see_the_result_after_every_response_hook_and_only_observers_keep_the_encoding() {
        // The observer is declared first, yet sees what the renamer made of the task.
        let set = set_of(vec![Observer {}.__into_dyn(), Renamer {}.__into_dyn()]);
        let mut n = negotiate(&set, &[Observer::URI, Renamer::URI]).unwrap();
        assert!(n.hooks_responses() && n.sees_responses());
        let mut task = crate::types::Task {
            id: "t".into(),
            ..Default::default()
        };
        n.handle_response(&mut Reply::Task(&mut task)).unwrap();
        assert_eq!(task.id, "renamed-t");
        task.id = "u".into();
        Arc::get_mut(&mut n)
            .unwrap()
            .handle_response_mut(&mut Reply::Task(&mut task))
            .unwrap();
        assert_eq!(
            n.extension::<Observer>().as_deref(),
            Some("renamed-trenamed-u")
        );
        // Each one's other response hook is its default body: dropped after its first call.
        let entries = &set.inner.entries;
        assert_eq!(entries[0].live.hooks() & HOOK_RESPONSE, 0);
        assert_eq!(entries[0].live.hooks() & HOOK_OBSERVE, HOOK_OBSERVE);
        assert_eq!(entries[1].live.hooks() & HOOK_OBSERVE, 0);
        assert_eq!(entries[1].live.hooks() & HOOK_RESPONSE, HOOK_RESPONSE);
        // A request activating only the observer cannot have its result changed: it keeps the
        // encoding made before the response hooks (see `core::events::reply_for`).
        let only = negotiate(&set, &[Observer::URI]).unwrap();
        assert!(only.sees_responses());
        assert!(!only.hooks_responses());
    }
}
