//! State-machine extensions: sub-states of the core task states, with validated transitions.
//!
//! The spec forbids new `TaskState` values, so a sub-state refines a core state and travels in
//! `TaskStatus.message.metadata` under the extension's metadata key, e.g. a `generating-image`
//! sub-state of TASK_STATE_WORKING. The extension keeps a [`StateMachine`] as one of its fields
//! — so the sub-states and transitions are documented in the card's params — and checks every
//! status change the agent makes while it is active in
//! [`ExtensionHooks::check_transition`](super::ExtensionHooks::check_transition). An illegal
//! transition is an error returned to the agent's `publish`; the task is not changed. The current
//! sub-state reads typed from a task with [`SubStateExt::sub_state`].
//!
//! ```
//! use a2a_runtime::a2a_extension;
//! use a2a_runtime::extension::{ExtensionHooks, StateMachine};
//! use a2a_runtime::types::{TaskState, TaskStatus};
//! use a2a_runtime::A2aError;
//! use serde::{Deserialize, Serialize};
//!
//! /// Image generation progress as sub-states of WORKING.
//! #[a2a_extension(uri = "https://example.com/ext/image-gen/v1", metadata = String)]
//! #[derive(Serialize, Deserialize)]
//! struct ImageGen {
//!     machine: StateMachine,
//! }
//!
//! impl Default for ImageGen {
//!     fn default() -> Self {
//!         let machine = StateMachine::new()
//!             .sub_state("generating-image", TaskState::Working)
//!             .sub_state("upscaling", TaskState::Working)
//!             .transition("TASK_STATE_WORKING", "generating-image")
//!             .transition("generating-image", "upscaling")
//!             .transition("upscaling", "TASK_STATE_COMPLETED");
//!         Self { machine }
//!     }
//! }
//!
//! impl ExtensionHooks for ImageGen {
//!     type Activation = ();
//!     fn check_transition(&self, from: &TaskStatus, to: &TaskStatus, _: &mut ()) -> Result<(), A2aError> {
//!         self.machine.check::<Self>(from, to)
//!     }
//! }
//! ```

use serde::{Deserialize, Serialize};

use super::traits::Extension;
use crate::error::A2aError;
use crate::types::{Task, TaskState, TaskStatus};

/// A sub-state of a core state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubState {
    /// Its name (e.g. `generating-image`).
    pub name: String,
    /// The core state it refines.
    pub of: TaskState,
}

/// An allowed transition between two nodes: sub-state names or core state names
/// (`TASK_STATE_WORKING`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    /// From.
    pub from: String,
    /// To.
    pub to: String,
}

/// The sub-states an extension adds and the transitions that involve them. Transitions between
/// core states alone stay governed by the core lifecycle, and moving to FAILED, CANCELED or
/// REJECTED is always allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateMachine {
    /// The sub-states.
    pub sub_states: Vec<SubState>,
    /// The allowed transitions that involve a sub-state.
    pub transitions: Vec<Transition>,
}

impl StateMachine {
    /// An empty machine.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a sub-state of `of`.
    pub fn sub_state(mut self, name: &str, of: TaskState) -> Self {
        self.sub_states.push(SubState {
            name: name.to_owned(),
            of,
        });
        self
    }

    /// Allows a transition.
    pub fn transition(mut self, from: &str, to: &str) -> Self {
        self.transitions.push(Transition {
            from: from.to_owned(),
            to: to.to_owned(),
        });
        self
    }

    fn is_sub_state(&self, node: &str) -> Option<&SubState> {
        self.sub_states.iter().find(|s| s.name == node)
    }

    /// Checks a status change against the machine; the sub-state of each status is read from
    /// its message's metadata under `E::METADATA_KEY`.
    pub fn check<E: Extension>(&self, from: &TaskStatus, to: &TaskStatus) -> Result<(), A2aError> {
        let node =
            |s: &TaskStatus| sub_state_of::<E>(s).unwrap_or_else(|| s.state.as_str().to_owned());
        let (a, b) = (node(from), node(to));
        if let Some(sub) = self.is_sub_state(&b)
            && sub.of != to.state
        {
            return Err(A2aError::invalid_field(
                "status.state",
                format!(
                    "sub-state {b:?} of {} refines {}, not {}",
                    E::URI,
                    sub.of,
                    to.state
                ),
            ));
        }
        if sub_state_of::<E>(to).is_some_and(|name| self.is_sub_state(&name).is_none()) {
            return Err(A2aError::invalid_field(
                "status.message.metadata",
                format!("{b:?} is not a sub-state declared by {}", E::URI),
            ));
        }
        // A task can always fail, be canceled or be rejected, whatever its sub-state.
        let gives_up = matches!(
            to.state,
            TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        );
        if gives_up && self.is_sub_state(&b).is_none() {
            return Ok(());
        }
        let involves_sub = self.is_sub_state(&a).is_some() || self.is_sub_state(&b).is_some();
        if a == b || !involves_sub || self.transitions.iter().any(|t| t.from == a && t.to == b) {
            Ok(())
        } else {
            Err(A2aError::invalid_field(
                "status",
                format!("{} does not allow the transition {a} -> {b}", E::URI),
            ))
        }
    }
}

fn sub_state_of<E: Extension>(status: &TaskStatus) -> Option<String> {
    status
        .message
        .as_ref()?
        .metadata
        .get(E::METADATA_KEY)?
        .as_str()
        .map(str::to_owned)
}

/// Reads an extension's sub-state from a task or a status.
pub trait SubStateExt {
    /// `E`'s current sub-state, when the status carries one.
    fn sub_state<E: Extension>(&self) -> Option<String>;
}

impl SubStateExt for TaskStatus {
    fn sub_state<E: Extension>(&self) -> Option<String> {
        sub_state_of::<E>(self)
    }
}

impl SubStateExt for Task {
    fn sub_state<E: Extension>(&self) -> Option<String> {
        sub_state_of::<E>(&self.status)
    }
}
