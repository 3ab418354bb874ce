//! Collecting extensions: the types linked into the binary with `#[a2a_extension]` (through
//! `inventory`), the ones a builder adds explicitly, and their resolution into the ordered
//! [`ExtensionSet`] that negotiates every request.

use super::erased::DynExtension;
use super::set::ExtensionSet;
use super::traits::Extension;
use crate::error::A2aError;

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
        set.log_enabled();
        Ok(set)
    }
}
