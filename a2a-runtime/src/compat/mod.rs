//! Earlier versions of the protocol, served and spoken beside v1.0.
//!
//! The same core, tasks and extensions serve every version: a request in an earlier version's
//! shapes is translated to v1.0 where it enters a binding, and its result back where it leaves.

pub(crate) mod v0_3;

/// A version of the A2A protocol this runtime speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// v1.0: `A2A-Version: 1.0`.
    V1_0,
    /// v0.3: no `A2A-Version` header (or `0.3`), the v0.3 method names, routes and shapes.
    V0_3,
}

impl ProtocolVersion {
    /// `Major.Minor`, e.g. `1.0`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V1_0 => crate::PROTOCOL_VERSION,
            Self::V0_3 => "0.3",
        }
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
