//! One configured extension of a set: its erased form, its dependencies and its counters.

use std::sync::atomic::AtomicU64;

use super::dependencies::Dependencies;
use super::policy::ActivationPolicy;
use super::traits::DynExtension;

/// Counters of one extension, over the life of a server.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(super) activations: AtomicU64,
    pub(super) skips: AtomicU64,
    pub(super) refusals: AtomicU64,
    pub(super) hook_errors: AtomicU64,
    pub(super) denials: AtomicU64,
}

/// One configured extension.
pub(crate) struct Entry {
    pub(super) ext: Box<dyn DynExtension>,
    pub(super) uri: &'static str,
    pub(super) counters: Counters,
    pub(super) dependencies: Dependencies,
    /// Who may activate it, when the operator said.
    pub(super) policy: Option<ActivationPolicy>,
    /// Declared on the extended card only: activated only for authenticated callers.
    pub(super) extended_only: bool,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}
