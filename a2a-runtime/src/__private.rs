//! Paths named by the output of `a2a-macros`. Not a public API: anything here may change in any
//! release.

pub use inventory;
pub use serde;
pub use serde_json;

pub use crate::extension::Extension;
pub use crate::extension::erased::{Probe, ViaData, ViaDefault, ViaHooks, ViaNoDefault};
// Named by `DynExtension`'s methods.
pub use crate::extension::activation_value::ActivationValue;
pub use crate::extension::implemented::HookOutcome;
pub use crate::extension::registry::ExtensionRegistration;
pub use crate::extension::traits::{DynExtension, Responding};
