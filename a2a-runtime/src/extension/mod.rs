//! Extensions: declaration, negotiation per request, typed metadata.

mod negotiated;

pub use negotiated::Negotiated;
