//! Extensions that ship with a2a-runtime. None is enabled by being linked: add them to a builder
//! explicitly.

mod timestamp;

pub use timestamp::TimestampExtension;
