//! Collecting extensions: the types linked into the binary with `#[a2a_extension]` (through
//! `inventory`), the ones a builder adds explicitly, and their resolution into the ordered
//! [`ExtensionSet`] that negotiates every request.
// Extensions are configured by a server or a client builder: with neither feature, nothing
// configures them.
#![cfg_attr(not(any(feature = "server", feature = "client")), allow(dead_code))]

use std::sync::{Arc, Mutex};

use super::dependencies::Dependencies;
use super::entry::{Counters, Entry};
use super::method_entry::MethodEntry;
use super::options::ExtensionOptions;
use super::policy::ActivationPolicy;
use super::set::{ExtensionSet, RECENT_VALUES, SetInner};
use super::traits::{DynExtension, Extension};
use crate::error::A2aError;
use crate::protocol::{Operation, Side};

/// One `#[a2a_extension]` type linked into the binary: the record the attribute's output
/// submits to `inventory` (not a public API; exported from `__private` only).
#[doc(hidden)]
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
    /// A data-only extension (no `ExtensionHooks`) is declared required: clients that do not
    /// activate it would be refused although it changes nothing the server does.
    #[error(
        "extension {uri} ({type_name}) is data-only and declared required; the extensions guide asks agents not to require data-only extensions: declare it required = false, or add allow_required_data_only = true to its #[a2a_extension] if clients really must activate it"
    )]
    RequiredDataOnly {
        /// The URI.
        uri: String,
        /// The type.
        type_name: String,
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

/// The extensions linked into this binary with `#[a2a_extension]`, from every crate of the
/// binary, excluding those that ship inside a2a-runtime (which are only ever enabled
/// explicitly).
///
/// A server enables the linked extensions that have a `Default` when its builder asks for them
/// (`.linked_extensions(true)`); a required one is never enabled that way.
///
/// ```
/// use a2a_runtime::extension::ExtensionRegistry;
///
/// for linked in ExtensionRegistry::linked().iter() {
///     println!("{} ({})", linked.uri, linked.type_name);
/// }
/// ```
#[derive(Debug)]
pub struct ExtensionRegistry {
    entries: Vec<&'static ExtensionRegistration>,
}

/// One extension type of an [`ExtensionRegistry`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct LinkedExtension {
    /// Its URI.
    pub uri: &'static str,
    /// The type's path (`crate::module::Type`).
    pub type_name: &'static str,
    /// Its default value, boxed, when it has one.
    pub(crate) linked: fn() -> Option<Box<dyn DynExtension>>,
}

impl ExtensionRegistry {
    /// Every linked extension type, sorted by URI (then type path).
    pub fn linked() -> Self {
        let mut entries: Vec<&'static ExtensionRegistration> =
            inventory::iter::<ExtensionRegistration>
                .into_iter()
                .filter(|r| !is_builtin(r.module_path))
                .collect();
        entries.sort_by(|a, b| a.uri.cmp(b.uri).then(a.type_name.cmp(b.type_name)));
        Self { entries }
    }

    /// The linked extension types.
    pub fn iter(&self) -> impl Iterator<Item = LinkedExtension> + '_ {
        self.entries.iter().map(|r| LinkedExtension {
            uri: r.uri,
            type_name: r.type_name,
            linked: r.linked,
        })
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
    /// The operator's options, by extension URI (handed to `init`; the others get none).
    pub(crate) options: Vec<(&'static str, ExtensionOptions)>,
    /// The operator's activation policies, by extension URI.
    pub(crate) policies: Vec<(&'static str, ActivationPolicy)>,
    /// The URIs of the extensions declared on the extended card only.
    pub(crate) extended_only: Vec<&'static str>,
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

    /// Sets who may activate extension `E` (replacing any policy set before).
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn set_policy<E: Extension>(&mut self, policy: ActivationPolicy) {
        self.policies.retain(|(uri, _)| *uri != E::URI);
        self.policies.push((E::URI, policy));
    }

    /// Declares extension `E` on the extended card only.
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn set_extended_only<E: Extension>(&mut self) {
        if !self.extended_only.contains(&E::URI) {
            self.extended_only.push(E::URI);
        }
    }

    /// Gives extension `E` these options for its `init` (replacing any given before).
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn set_options<E: Extension>(&mut self, options: ExtensionOptions) {
        self.options.retain(|(uri, _)| *uri != E::URI);
        self.options.push((E::URI, options));
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
        // Servers serve what is required; clients only name it.
        if self.require_dependencies
            && let Some(ext) = chosen
                .iter()
                .find(|e| e.required() && !e.has_hooks() && !e.allow_required_data_only())
        {
            return Err(RegistryError::RequiredDataOnly {
                uri: ext.uri().to_owned(),
                type_name: ext.type_name().to_owned(),
            });
        }
        // Servers check dependencies; clients only name them.
        let side = if self.require_dependencies {
            Side::Server
        } else {
            Side::Client
        };
        let mut options = self.options;
        for ext in &mut chosen {
            let given = options
                .iter()
                .position(|(uri, _)| *uri == ext.uri())
                .map(|i| options.swap_remove(i).1)
                .unwrap_or_default();
            ext.init(&given.on(side))
                .map_err(|error| RegistryError::Init {
                    uri: ext.uri().to_owned(),
                    error,
                })?;
        }
        let set = ExtensionSet::from_parts(
            chosen,
            self.require_dependencies,
            self.policies,
            &self.extended_only,
        )?;
        set.log_enabled();
        Ok(set)
    }
}

impl ExtensionSet {
    /// Checks dependencies and methods, and builds the set.
    fn from_parts(
        exts: Vec<Box<dyn DynExtension>>,
        require_dependencies: bool,
        mut policies: Vec<(&'static str, ActivationPolicy)>,
        extended_only: &[&'static str],
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
                let policy = policies
                    .iter()
                    .position(|(uri, _)| *uri == ext.uri())
                    .map(|i| policies.swap_remove(i).1);
                let uri = ext.uri();
                Arc::new(Entry {
                    uri,
                    ext,
                    counters: Counters::default(),
                    dependencies,
                    policy,
                    extended_only: extended_only.contains(&uri),
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
