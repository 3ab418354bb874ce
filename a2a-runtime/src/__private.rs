//! Paths named by the output of `a2a-macros`. Not a public API: anything here may change in any
//! release.

pub use inventory;
pub use serde;
pub use serde_json;

pub use crate::extension::{
    DynExtension, Extension, ExtensionRegistration, Probe, ViaData, ViaDefault, ViaHooks,
    ViaNoDefault,
};
