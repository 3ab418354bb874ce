//! ProtoJSON input leniency and output strictness, one test per rule (spec digest §1).
//!
//! Input: every form a ProtoJSON parser accepts is accepted (snake_case names, enum numbers,
//! int32 strings, URL-safe/unpadded base64, `null` as unset, any timestamp offset and 0/3/6/9
//! fractional digits, unknown fields at every level). Each rejection carries its JSON-RPC code and
//! names the offending field path. Output: lowerCamelCase, full enum names, defaults omitted,
//! presence fields emitted when set, `Z` timestamps with milliseconds, standard padded base64.
//!
//! Accepted input, rejected input and output, one module each; the helpers they share are here.

use a2a_runtime::error::{A2aError, FieldViolation};
use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
use a2a_runtime::types::{Timestamp, Validate};
use serde::de::DeserializeOwned;
use serde_json::Value;

mod accepted;
mod output;
mod rejected;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Decodes with the production decoder; panics with the error on failure.
fn decode<T: DeserializeOwned>(text: &str) -> T {
    json::decode(text.as_bytes(), DEFAULT_MAX_DEPTH)
        .unwrap_or_else(|e| panic!("decode failed: {e}\n{text}"))
}

/// Decodes and validates; panics on either failure.
fn accept<T: DeserializeOwned + Validate>(text: &str) -> T {
    let value: T = decode(text);
    value
        .validate()
        .unwrap_or_else(|e| panic!("validation failed: {e}\n{text}"));
    value
}

fn violations(err: &A2aError) -> &[FieldViolation] {
    match err {
        A2aError::InvalidParams { violations } => violations,
        other => panic!("expected InvalidParams, got {other:?}"),
    }
}

/// Asserts `err` is -32602 and names `path`, both in a violation and in its message.
fn assert_names_path(err: &A2aError, path: &str) {
    assert_eq!(err.code(), -32602, "{err}");
    assert!(
        violations(err).iter().any(|v| v.field == path),
        "no violation of {path:?} in {:?}",
        violations(err)
    );
    assert!(err.to_string().contains(path), "{err}");
    // The REST body and the JSON-RPC error carry it too, as a google.rpc.BadRequest.
    let body = err.to_jsonrpc_error();
    let fields: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["@type"] == "type.googleapis.com/google.rpc.BadRequest")
        .flat_map(|d| d["fieldViolations"].as_array().unwrap())
        .map(|v| v["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&path), "{body}");
}

/// Asserts decoding fails with -32602 naming `path`.
fn reject_decode<T: DeserializeOwned + std::fmt::Debug>(text: &str, path: &str) -> A2aError {
    let err = json::decode::<T>(text.as_bytes(), DEFAULT_MAX_DEPTH).unwrap_err();
    assert_names_path(&err, path);
    err
}

/// Asserts decoding succeeds and validation fails with -32602 naming `path`.
fn reject_validate<T: DeserializeOwned + Validate>(text: &str, path: &str) -> A2aError {
    let value: T = decode(text);
    let err = value.validate().unwrap_err();
    assert_names_path(&err, path);
    err
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

fn ts(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}
