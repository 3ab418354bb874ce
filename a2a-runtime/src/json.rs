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
//! Parsing and validation are separate steps: [`decode`] turns bytes into a typed value and
//! classifies failures as [`A2aError::Parse`] (not JSON at all) or [`A2aError::InvalidParams`] (JSON
//! of the wrong shape, with the field path). The REQUIRED-field and value rules are then checked by
//! [`Validate`](crate::types::Validate).

use std::fmt;

use base64::Engine as _;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

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
    let mut de = serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(&mut de).map_err(shape_error)?;
    de.end().map_err(|e| A2aError::Parse(e.to_string()))?;
    Ok(value)
}

/// Decodes an already parsed JSON value into `T` (used for `params` of a JSON-RPC envelope).
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, A2aError> {
    serde_path_to_error::deserialize(value).map_err(shape_error)
}

/// Decodes a borrowed raw JSON text (already known to be well-formed and depth-checked) into `T`.
pub fn from_raw<T: DeserializeOwned>(raw: &str) -> Result<T, A2aError> {
    let mut de = serde_json::Deserializer::from_str(raw);
    serde_path_to_error::deserialize(&mut de).map_err(shape_error)
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
    let mut in_string = false;
    let mut escaped = false;
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
                    return Err(A2aError::Parse(format!(
                        "JSON nested deeper than the limit of {max_depth} levels"
                    )));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
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
        let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Self::decode(&text).map_err(|e| de::Error::custom(format!("invalid base64: {e}")))
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
