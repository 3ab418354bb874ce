//! Compact JSON output, byte-identical to `serde_json::to_vec`, written straight into a
//! `Vec<u8>`.
//!
//! serde_json escapes every string (object keys included) one byte at a time through its
//! `Formatter`; here a string is scanned eight bytes at a time (SWAR on `u64` words) for the
//! next byte that needs escaping (`"`, `\` or a control byte below 0x20), and the plain runs in
//! between are copied whole; a plain string of up to 16 bytes (most keys and enum names) is
//! checked and copied as one 128-bit word, and a struct's key is written with its `:` in the same
//! step. Everything else follows serde_json's `Serializer` with its
//! `CompactFormatter` step by step (numbers are written by that formatter itself), so the output,
//! and the error on a value that has no JSON form, are the same as serde_json's:
//!
//! - `/` and non-ASCII characters are written as they are; `\b \f \n \r \t \" \\` get their
//!   short escapes, other control bytes `\u00XX` with lowercase hex digits;
//! - non-finite floats are `null`; bytes are an array of numbers; unit variants are their name
//!   as a string, other enum variants `{"name":…}`;
//! - map keys: strings and chars as strings, integers, booleans and finite floats quoted, any
//!   other key is serde_json's "key must be a string" error;
//! - a `serde_json::value::RawValue` is written verbatim.
//!
//! The files, each using only the ones below it: `serializer` (the `Serializer` and its
//! compounds); `map_key` and `raw_value` (the two restricted serializers serde_json has for map
//! keys and raw values); `tokens` (strings, keys and numbers); `error`.

mod error;
mod map_key;
mod raw_value;
mod serializer;
#[cfg(test)]
mod tests;
mod tokens;

use serde::Serialize;

use serializer::JsonOut;

/// Appends the compact JSON of `value` to `out`, byte for byte what
/// `serde_json::to_writer(&mut *out, value)` appends, and faster: the encoder of every reply
/// the server writes.
///
/// # Errors
///
/// When `value`'s `Serialize` fails or it holds a map key that JSON cannot have: the error
/// `serde_json::to_writer` gives, same message and category. Part of the JSON may then have
/// been appended.
#[inline]
pub fn to_writer<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    value.serialize(&mut JsonOut { out })
}

/// The compact JSON of `value`, byte for byte what `serde_json::to_vec(value)` returns.
///
/// ```
/// use a2a_runtime::types::{Message, Task};
///
/// let task = Task { history: vec![Message::user_text("hi")], ..Task::default() };
/// assert_eq!(a2a_runtime::json::to_vec(&task)?, serde_json::to_vec(&task)?);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// # Errors
///
/// As [`to_writer`].
#[inline]
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(128);
    to_writer(&mut out, value)?;
    Ok(out)
}
