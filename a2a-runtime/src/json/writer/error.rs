//! The writer's error: serde_json's own, for values that have no JSON form.

use std::io;

use serde::ser::{self, Serialize};

/// The error of [`to_writer`](super::to_writer) and [`to_vec`](super::to_vec): serde_json's, with the same message and
/// category as `serde_json::to_writer` gives for the same value.
pub(super) type Error = serde_json::Error;

pub(super) type Result<T, E = Error> = std::result::Result<T, E>;

/// The error serde_json gives for `value` (which must fail there), so that ours is the same.
#[cold]
pub(super) fn serde_json_error<T: Serialize>(value: &T, message: &str) -> Error {
    serde_json::to_writer(io::sink(), value)
        .err()
        .unwrap_or_else(|| ser::Error::custom(message))
}
