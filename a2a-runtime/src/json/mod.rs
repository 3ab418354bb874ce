//! ProtoJSON rules shared by every wire type: strict on output, lenient on input.
//!
//! Output follows the ProtoJSON mapping of the A2A proto exactly: lowerCamelCase names, full enum
//! names, defaults omitted (except for fields with presence), RFC 3339 UTC timestamps with `Z` and
//! milliseconds, standard padded base64.
//!
//! Input also accepts what any ProtoJSON parser accepts: proto `snake_case` names (declared as serde
//! aliases on each field), enum numbers, `int32` values given as strings, URL-safe and unpadded
//! base64, `null` meaning "unset", any timestamp offset, and unknown fields (ignored).
//!
//! [`to_vec`] and [`to_writer`] write that output: compact JSON, byte for byte what serde_json
//! writes for the same value, in less time.
//!
//! Parsing and validation are separate steps: [`decode`] turns bytes into a typed value and
//! classifies failures as [`A2aError::Parse`] (not JSON at all) or [`A2aError::InvalidParams`] (JSON
//! of the wrong shape, with the field path). The REQUIRED-field and value rules are then checked by
//! [`Validate`](crate::types::Validate).

#[cfg(feature = "server")]
pub(crate) mod rpc;
#[cfg(feature = "server")]
pub(crate) mod splice;
pub(crate) mod timestamp;
pub(crate) mod writer;

use std::fmt;

use base64::Engine as _;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

pub use writer::{to_vec, to_writer};

use crate::error::{A2aError, FieldViolation};

/// Maximum nesting depth of JSON accepted by [`decode`] unless the caller picks another.
pub const DEFAULT_MAX_DEPTH: usize = 64;

/// Decodes a ProtoJSON body into `T`, checking the nesting depth first.
///
/// A body that is not JSON (or not UTF-8, or nested deeper than `max_depth`) is
/// [`A2aError::Parse`]; well-formed JSON of the wrong shape is [`A2aError::InvalidParams`] naming
/// the field path, e.g. `message.parts[0].raw`.
///
/// ```
/// use a2a_runtime::{json, types::Message, error::A2aError};
/// let err = json::decode::<Message>(br#"{"role": 7}"#, 64).unwrap_err();
/// assert_eq!(err.code(), -32602);
/// assert!(matches!(json::decode::<Message>(b"{", 64), Err(A2aError::Parse(_))));
/// ```
pub fn decode<T: DeserializeOwned>(body: &[u8], max_depth: usize) -> Result<T, A2aError> {
    check_depth(body, max_depth)?;
    // One UTF-8 check of the whole body is much faster than serde_json's check of each string.
    let text = std::str::from_utf8(body)
        .map_err(|e| A2aError::Parse(format!("the body is not UTF-8: {e}")))?;
    from_raw(text)
}

/// Decodes an already parsed JSON value into `T` (used for `params` of a JSON-RPC envelope).
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, A2aError> {
    serde_path_to_error::deserialize(value).map_err(shape_error)
}

/// Decodes a borrowed raw JSON text (already known to be well-formed and depth-checked) into `T`.
///
/// Errors are classified as by [`decode`].
pub fn from_raw<T: DeserializeOwned>(raw: &str) -> Result<T, A2aError> {
    // Fast path: no path tracking. Only a failed body is parsed again, to name the field.
    serde_json::from_str(raw).map_err(|fast| {
        let mut de = serde_json::Deserializer::from_str(raw);
        match serde_path_to_error::deserialize::<_, T>(&mut de) {
            Err(e) => not_json_first(shape_error(e), || serde_json::from_str(raw)),
            Ok(_) => A2aError::Parse(de.end().err().unwrap_or(fast).to_string()),
        }
    })
}

/// A shape error found before the parser reached a syntax error (e.g. `[1, 2` read as a struct)
/// is reported as what it is: not JSON. Only runs on the error path.
fn not_json_first(
    err: A2aError,
    reparse: impl FnOnce() -> Result<de::IgnoredAny, serde_json::Error>,
) -> A2aError {
    match (&err, reparse()) {
        (A2aError::InvalidParams { .. }, Err(syntax)) => A2aError::Parse(syntax.to_string()),
        _ => err,
    }
}

fn shape_error(err: serde_path_to_error::Error<serde_json::Error>) -> A2aError {
    let path = err.path().to_string();
    let inner = err.into_inner();
    match inner.classify() {
        serde_json::error::Category::Data => {
            let field = if path == "." { String::new() } else { path };
            let description = strip_position(&inner.to_string());
            A2aError::invalid_params(vec![FieldViolation::new(field, description)])
        }
        _ => A2aError::Parse(inner.to_string()),
    }
}

fn strip_position(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

/// Rejects bodies nested deeper than `max_depth` (arrays and objects), without allocating.
///
/// Strings are skipped (brackets inside them do not count). Malformed input is left for the
/// parser to report.
pub fn check_depth(body: &[u8], max_depth: usize) -> Result<(), A2aError> {
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = body.get(i) {
        match b {
            b'"' => {
                i = skip_string(body, i + 1);
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > max_depth {
                    return Err(A2aError::Parse(format!(
                        "JSON nested deeper than the limit of {max_depth} levels"
                    )));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The index just past the closing quote of the string whose content starts at `i` (or the end
/// of `body` when it is unterminated).
pub(crate) fn skip_string(body: &[u8], mut i: usize) -> usize {
    loop {
        let Some(rest) = body.get(i..) else {
            return body.len();
        };
        match find_quote_or_backslash(rest) {
            None => return body.len(),
            Some(p) if rest[p] == b'\\' => i += p + 2,
            Some(p) => return i + p + 1,
        }
    }
}

/// The first `"` or `\` in `s`, eight bytes at a time (the string contents are most of a body).
fn find_quote_or_backslash(s: &[u8]) -> Option<usize> {
    const LO: u64 = u64::from_ne_bytes([0x01; 8]);
    const HI: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    // Bytes equal to zero in `v` get their high bit set; the lowest such bit is exact.
    let zero_bytes = |v: u64| v.wrapping_sub(LO) & !v & HI;
    let mut chunks = s.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let found = zero_bytes(x ^ QUOTES) | zero_bytes(x ^ BACKSLASHES);
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\')
        .map(|p| offset + p)
}

/// `skip_serializing_if` helper: true for `false`.
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// `deserialize_with` helper: `null` (or absence, with `#[serde(default)]`) means the default.
pub(crate) fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `deserialize_with` helper for `bool` fields: accepts `true`/`false`, `null`, and the strings
/// `"true"`/`"false"` (as ProtoJSON parsers do).
pub(crate) fn lenient_bool<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(lenient_opt_bool(d)?.unwrap_or(false))
}

/// `deserialize_with` helper for `Option<bool>` fields with presence.
pub(crate) fn lenient_opt_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<bool>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a boolean")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            match v {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
            }
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    }
    d.deserialize_option(V)
}

/// `deserialize_with` helper for `int32` fields: a JSON number or a numeric string, in `i32` range.
pub(crate) fn int32<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    Ok(opt_int32(d)?.unwrap_or(0))
}

/// `deserialize_with` helper for `optional int32` fields (with presence).
pub(crate) fn opt_int32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<i32>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a 32-bit integer (number or numeric string)")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            i32::try_from(v)
                .map(Some)
                .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            i32::try_from(v)
                .map(Some)
                .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            // ProtoJSON accepts integral floats such as `5.0` or `1e2`.
            if v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX) {
                #[allow(clippy::cast_possible_truncation)]
                Ok(Some(v as i32))
            } else {
                Err(E::invalid_value(de::Unexpected::Float(v), &self))
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            v.trim()
                .parse::<i32>()
                .map(Some)
                .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    }
    d.deserialize_option(V)
}

/// Binary content, emitted as standard padded base64 and accepted as standard or URL-safe base64,
/// with or without padding.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Base64Bytes(pub Vec<u8>);

impl fmt::Debug for Base64Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Base64Bytes({} bytes)", self.0.len())
    }
}

impl From<Vec<u8>> for Base64Bytes {
    fn from(v: Vec<u8>) -> Self {
        Self(v)
    }
}

impl std::ops::Deref for Base64Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

const B64_STANDARD: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;
const B64_LENIENT_STD: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);
const B64_LENIENT_URL: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

impl Base64Bytes {
    /// Decodes standard or URL-safe base64, padded or not.
    pub fn decode(text: &str) -> Result<Self, base64::DecodeError> {
        let url_safe = text.bytes().any(|b| b == b'-' || b == b'_');
        let engine = if url_safe {
            &B64_LENIENT_URL
        } else {
            &B64_LENIENT_STD
        };
        engine.decode(text).map(Self)
    }

    /// Encodes as standard base64 with padding (the ProtoJSON output form).
    pub fn encode(&self) -> String {
        B64_STANDARD.encode(&self.0)
    }
}

impl Serialize for Base64Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.encode())
    }
}

impl<'de> Deserialize<'de> for Base64Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Base64Bytes;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a base64 string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Base64Bytes, E> {
                Base64Bytes::decode(v).map_err(|e| E::custom(format!("invalid base64: {e}")))
            }
        }
        d.deserialize_str(V)
    }
}

/// A map key matched against a fixed list of names without allocating: the matching name, or
/// `None` for a key outside the list (an unknown field, to be ignored).
pub(crate) struct KeyIn(pub(crate) &'static [&'static str]);

impl<'de> de::DeserializeSeed<'de> for KeyIn {
    type Value = Option<&'static str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl Visitor<'_> for KeyIn {
    type Value = Option<&'static str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().copied().find(|name| *name == v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_only_structure_outside_strings() {
        assert!(check_depth(br#"{"a":"[[[[[[[[[[[["}"#, 2).is_ok());
        assert!(check_depth(br#"[[[]]]"#, 3).is_ok());
        assert!(check_depth(br#"[[[[]]]]"#, 3).is_err());
        assert!(check_depth(br#"{"a":"\"[[[["}"#, 1).is_ok());
    }

    /// The byte-at-a-time definition `check_depth` must agree with.
    fn naive_depth_ok(body: &[u8], max_depth: usize) -> bool {
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        for &b in body {
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => {
                    depth += 1;
                    if depth > max_depth {
                        return false;
                    }
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        true
    }

    #[test]
    fn depth_skips_long_strings_and_escapes_at_every_offset() {
        for pad in 0..20 {
            let text = "x".repeat(pad);
            let body = format!(r#"{{"a":"{text}\"[[[[{text}\\","b":[[1]]}}"#);
            assert!(check_depth(body.as_bytes(), 3).is_ok(), "{body}");
            assert!(check_depth(body.as_bytes(), 2).is_err(), "{body}");
        }
        // Unterminated string and a trailing backslash.
        assert!(check_depth(br#"[["abc"#, 2).is_ok());
        assert!(check_depth(br#"[["abc\"#, 2).is_ok());
        assert!(check_depth(br#"[["abc\"#, 1).is_err());
    }

    proptest::proptest! {
        #[test]
        fn depth_agrees_with_the_naive_scan(
            body in proptest::collection::vec(
                proptest::sample::select(&b"{}[]\"\\ax"[..]), 0..96),
            max_depth in 0usize..6,
        ) {
            proptest::prop_assert_eq!(
                check_depth(&body, max_depth).is_ok(),
                naive_depth_ok(&body, max_depth)
            );
        }
    }

    #[test]
    fn base64_accepts_all_four_forms_and_emits_padded_standard() {
        let bytes = vec![0xfb, 0xff, 0xfe, 0x01];
        for text in ["+//+AQ==", "+//+AQ", "-__-AQ==", "-__-AQ"] {
            assert_eq!(
                Base64Bytes::decode(text).map(|b| b.0),
                Ok(bytes.clone()),
                "{text}"
            );
        }
        assert_eq!(Base64Bytes(bytes).encode(), "+//+AQ==");
        assert!(Base64Bytes::decode("not base64!").is_err());
    }
}
