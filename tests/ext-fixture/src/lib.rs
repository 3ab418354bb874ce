//! An extension defined in a crate of its own, to show that `#[a2a_extension]` registrations
//! of a linked dependency are collected by `ExtensionRegistry::linked()`.

use a2a_runtime::a2a_extension;
use serde::{Deserialize, Serialize};

/// The URI of [`Rating`].
pub const RATING_URI: &str = "https://fixture.example/ext/rating/v1";

/// Lets clients rate the agent's answers on a scale.
#[a2a_extension(uri = "https://fixture.example/ext/rating/v1", metadata = u8)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rating {
    /// The highest rating.
    pub scale: u8,
    /// What the rating measures.
    pub measures: String,
}

impl Default for Rating {
    fn default() -> Self {
        Self {
            scale: 5,
            measures: "helpfulness".into(),
        }
    }
}

/// Referenced by a test binary so the linker keeps this crate's code, registration included
/// (a registration in a crate that nothing references is dropped by the linker).
#[inline(never)]
pub fn link() -> &'static str {
    RATING_URI
}
