//! Paths named by the output of `a2a-macros`. Not a public API: anything here may change in any
//! release.

pub use inventory;
pub use serde;
pub use serde_json;
