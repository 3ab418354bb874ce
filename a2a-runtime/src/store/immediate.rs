//! Immediate writes: a capability a [`TaskStore`](super::TaskStore) may offer (through its
//! hidden `immediate` method) when it writes under its own lock, at once, without a future.
//!
//! The runtime then writes a live task without awaiting, shares its live copy with the store
//! instead of copying it, and hands the store the task's JSON when it has encoded it for a reply
//! (one encoding for both). A store that declines (the default) is written through the
//! [`TaskStore`](super::TaskStore) methods, with the same outcome. [`InMemoryTaskStore`]
//! offers it.
//!
//! Not a public API: no store outside this crate is expected to offer it, and it may change
//! with the runtime.
//!
//! [`InMemoryTaskStore`]: super::InMemoryTaskStore

use std::fmt;
use std::sync::Arc;

use super::error::StoreError;
use crate::error::A2aError;
use crate::protocol::{Scope, SeqEvent};
use crate::types::Task;

/// A task write done at once by [`ImmediateWrites::write_now`].
#[derive(Clone, Copy, Debug)]
pub enum Write<'a> {
    /// As [`TaskStore::create`](super::TaskStore::create).
    Create,
    /// As [`TaskStore::update`](super::TaskStore::update) with this expected version.
    Update {
        /// The version the writer read.
        expected_version: u64,
        /// What the update changes, when the writer knows it.
        delta: Option<Delta<'a>>,
    },
}

/// What an update changes, when the writer knows it: one agent event, applied by the task
/// lifecycle to the task as stored at the update's expected version.
// A store holding a live task as a value applies the event to its copy instead of copying the
// whole written task: a streamed artifact grows by one chunk per event, and copying the task
// after every chunk makes a long stream's cost grow with the square of its length.
#[derive(Clone, Copy)]
pub struct Delta<'a> {
    /// Applies the event to a task as the writer did (the writer's lifecycle and history
    /// policy); `false`, leaving the task unchanged, when it cannot be applied.
    apply: &'a (dyn Fn(&mut Task) -> bool + Sync),
}

impl fmt::Debug for Delta<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delta").finish_non_exhaustive()
    }
}

impl<'a> Delta<'a> {
    /// The change `apply` makes.
    pub fn new(apply: &'a (dyn Fn(&mut Task) -> bool + Sync)) -> Self {
        Self { apply }
    }

    /// Applies the event to `task` (the task as stored at the update's expected version).
    pub fn apply_to(&self, task: &mut Task) -> bool {
        (self.apply)(task)
    }
}

/// A change of a live task made under the store's lock by [`ImmediateWrites::update_lent`]:
/// changes the task and returns the encoded reply it answers, if any (`Err` before it changes
/// anything).
pub type LentChange<'a> = &'a mut dyn FnMut(&mut Task) -> Result<Option<Vec<u8>>, A2aError>;

/// What [`ImmediateWrites::update_lent`] did once the store accepted the update: the new version
/// and the reply the change returned, or the change's error (nothing changed).
pub type Lent = Result<(u64, Option<Vec<u8>>), A2aError>;

/// A store that writes at once, under its own lock (see the [module](self)).
pub trait ImmediateWrites: Send + Sync {
    /// Does `write` of `task` at once, as `create` or `update` would. `json`, when given, is
    /// `task`'s ProtoJSON as the crate's writer writes it (the runtime has it when the task is
    /// about to be sent as a reply), kept instead of encoding the task a second time; `event`,
    /// when given, is logged.
    ///
    /// A live `task` may be held shared, not copied: the runtime changes its copy with
    /// [`Arc::make_mut`] (or through [`update_lent`](Self::update_lent)).
    fn write_now(
        &self,
        scope: &Scope,
        task: &Arc<Task>,
        json: Option<&[u8]>,
        write: Write<'_>,
        event: Option<Arc<SeqEvent>>,
    ) -> Result<u64, StoreError>;

    /// Changes the live task `task` (the runtime's copy) with `change` and stores it, as an
    /// update at `expected_version` logging no event (for a task nobody subscribes to), all
    /// under the store's lock; a store sharing `task` since the runtime's last write lets go of
    /// it first, so that `change` changes it in place and no reader sees it half changed.
    /// `json` finds the task's encoding (as for [`write_now`](Self::write_now)) in the reply
    /// `change` returned.
    ///
    /// The store's error leaves everything as it was; so does `change`'s.
    #[allow(clippy::type_complexity)]
    fn update_lent(
        &self,
        scope: &Scope,
        task: &mut Arc<Task>,
        expected_version: u64,
        change: LentChange<'_>,
        json: fn(&[u8]) -> Option<&[u8]>,
    ) -> Result<Lent, StoreError>;
}
