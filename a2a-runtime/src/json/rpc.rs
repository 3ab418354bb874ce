//! JSON-RPC 2.0 envelopes: reading a request object and writing a response object around a
//! result or an error.
//!
//! The usual request object is read in one structural pass ([`scan`]), then its params are
//! parsed; anything else goes through serde_json's full parse ([`read`]), which gives the exact
//! error. Both read a request the same way.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::A2aError;

/// The id of a response to a request whose id could not be read.
pub(crate) const NULL_ID: &str = "null";

/// The longest `id` accepted, as its JSON text (256 bytes): the id is echoed in the response and
/// in every event of a stream, so a long one would multiply the response.
pub(crate) const MAX_ID_BYTES: usize = 256;

/// The `id` member: absent (a notification) or any raw JSON value, kept verbatim (borrowed from
/// the body).
#[derive(Default)]
struct RawId<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for RawId<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|raw| Self(Some(raw)))
    }
}

/// The request object as serde_json reads it (the full parser, for any well-formed JSON).
#[derive(Deserialize)]
struct WireEnvelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow)]
    id: RawId<'a>,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

/// The members of a request object, each as its raw JSON text (absent: `None`).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Envelope<'a> {
    pub(crate) jsonrpc: Option<&'a str>,
    pub(crate) id: Option<&'a str>,
    pub(crate) method: Option<&'a str>,
    pub(crate) params: Option<&'a str>,
}

impl<'a> Envelope<'a> {
    /// The members at the places [`scan_spans`] found in `text`.
    fn at(text: &'a str, spans: [Option<(usize, usize)>; 4]) -> Self {
        let [jsonrpc, id, method, params] = spans.map(|s| s.and_then(|(a, b)| text.get(a..b)));
        Self {
            jsonrpc,
            id,
            method,
            params,
        }
    }
}

impl<'a> From<WireEnvelope<'a>> for Envelope<'a> {
    fn from(w: WireEnvelope<'a>) -> Self {
        Self {
            jsonrpc: w.jsonrpc.map(RawValue::get),
            id: w.id.0.map(RawValue::get),
            method: w.method.map(RawValue::get),
            params: w.params.map(RawValue::get),
        }
    }
}

impl<'a> Envelope<'a> {
    /// The `id` member's JSON text: `None` for a notification; an error (to answer with a
    /// null id) when it is not a string, a number or null, or longer than [`MAX_ID_BYTES`].
    pub(crate) fn checked_id(&self) -> Result<Option<&'a str>, A2aError> {
        let Some(raw) = self.id else {
            return Ok(None);
        };
        let t = raw.trim_start();
        let valid = t.starts_with('"')
            || t.starts_with('-')
            || t.as_bytes().first().is_some_and(u8::is_ascii_digit)
            || t == "null";
        if !valid {
            return Err(A2aError::InvalidRequest(
                "id must be a string, a number or null".into(),
            ));
        }
        if raw.len() > MAX_ID_BYTES {
            return Err(A2aError::InvalidRequest(format!(
                "id is {} bytes long; at most {MAX_ID_BYTES} are accepted",
                raw.len()
            )));
        }
        Ok(Some(raw))
    }

    /// The method name, once `jsonrpc` is checked to be `"2.0"` (borrowed from the body unless
    /// it holds escapes).
    pub(crate) fn checked_method(&self) -> Result<Cow<'a, str>, A2aError> {
        if self.jsonrpc != Some("\"2.0\"") {
            return Err(A2aError::InvalidRequest(r#"jsonrpc must be "2.0""#.into()));
        }
        match self.method {
            Some(raw) => match serde_json::from_str::<&str>(raw) {
                Ok(plain) => Ok(Cow::Borrowed(plain)),
                Err(_) => serde_json::from_str::<String>(raw)
                    .map(Cow::Owned)
                    .map_err(|_| A2aError::InvalidRequest("method must be a string".into())),
            },
            None => Err(A2aError::InvalidRequest("method is required".into())),
        }
    }
}

/// The usual request object read in one structural pass (see [`scan_spans`]), or `None` when
/// it is anything else: then [`read`] reads it.
pub(crate) fn scan(body: &[u8], max_depth: usize) -> Option<Envelope<'_>> {
    let spans = scan_spans(body, max_depth)?;
    let text = simdutf8::basic::from_utf8(body).ok()?;
    Some(Envelope::at(text, spans))
}

/// Reads any request object with serde_json's full parser: a body nested deeper than
/// `max_depth`, not UTF-8 or not JSON is a parse error; a batch (an array) or a value that is
/// not a request object is an invalid request.
pub(crate) fn read(body: &[u8], max_depth: usize) -> Result<Envelope<'_>, A2aError> {
    super::check_depth(body, max_depth)?;
    // Validated with SIMD; the standard library only to describe a failure.
    let text = simdutf8::basic::from_utf8(body).map_err(|_| {
        let detail = std::str::from_utf8(body).err();
        let detail = detail.map(|e| e.to_string()).unwrap_or_default();
        A2aError::Parse(format!("body is not UTF-8: {detail}"))
    })?;
    let first = text.trim_start().as_bytes().first().copied();
    if first == Some(b'[') {
        // Well-formed JSON is required before we call it a batch.
        serde_json::from_str::<serde::de::IgnoredAny>(text)
            .map_err(|e| A2aError::Parse(e.to_string()))?;
        return Err(A2aError::InvalidRequest(
            "batch requests are not supported; send one request per HTTP call".into(),
        ));
    }
    match serde_json::from_str::<WireEnvelope<'_>>(text) {
        Ok(envelope) => Ok(envelope.into()),
        Err(e) if e.classify() == serde_json::error::Category::Data => Err(
            A2aError::InvalidRequest(format!("not a JSON-RPC 2.0 request object: {e}")),
        ),
        Err(e) => Err(A2aError::Parse(e.to_string())),
    }
}

/// Which member of a response object holds the payload.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Member {
    /// `result`.
    Result,
    /// `error`.
    Error,
}

/// Writes `{"jsonrpc":"2.0","id":<id>,"result":` (or `"error":`) to `out`; the caller writes
/// the payload, then [`close`].
pub(crate) fn open(out: &mut Vec<u8>, id: &str, member: Member) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(match member {
        Member::Result => br#","result":"#,
        Member::Error => br#","error":"#,
    });
}

/// Closes a response object begun by [`open`].
pub(crate) fn close(out: &mut Vec<u8>) {
    out.push(b'}');
}

/// Writes a whole response object with `value` as its `member`.
pub(crate) fn write<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    id: &str,
    member: Member,
    value: &T,
) -> Result<(), serde_json::Error> {
    open(out, id, member);
    let written = super::writer::to_writer(out, value);
    close(out);
    written
}

/// One structural pass over the usual request object, in place of the depth check and the full
/// parse: an object whose members are only `jsonrpc`, `id`, `method` and `params` (each at
/// most once, in any order, their names without escapes), `jsonrpc` and `method` strings and an
/// `id` string without escapes or control characters (or an `id` number or `null`), and an
/// object `params` nested no deeper than `max_depth` (counted as [`check_depth`](super::check_depth) counts).
///
/// Returns where each member's value is (`jsonrpc`, `id`, `method`, `params`), or `None` for
/// anything else. Everything but the content of `params` is checked here to be well-formed; that
/// content is parsed in full next, and a request whose params fail to parse goes through the
/// full parser too. So a request read this way is one the full parser reads the same way.
fn scan_spans(body: &[u8], max_depth: usize) -> Option<[Option<(usize, usize)>; 4]> {
    let ws = |mut i: usize| {
        while matches!(body.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    };
    let mut spans = [None; 4];
    let mut i = ws(0);
    if body.get(i) != Some(&b'{') || max_depth == 0 {
        return None;
    }
    i = ws(i + 1);
    if body.get(i) == Some(&b'}') {
        return (ws(i + 1) == body.len()).then_some(spans);
    }
    loop {
        let (key_start, key_end) = plain_string(body, i)?;
        let slot = match body.get(key_start..key_end)? {
            b"jsonrpc" => 0,
            b"id" => 1,
            b"method" => 2,
            b"params" => 3,
            _ => return None,
        };
        i = ws(key_end + 1);
        if body.get(i) != Some(&b':') {
            return None;
        }
        let start = ws(i + 1);
        let end = match (slot, body.get(start)?) {
            (3, b'{') => object_end(body, start, max_depth)?,
            (3, _) => return None,
            (1, b'n') => (body.get(start..start + 4)? == b"null").then_some(start + 4)?,
            (1, b'-' | b'0'..=b'9') => number_end(body, start)?,
            (_, b'"') => plain_string(body, start)?.1 + 1,
            _ => return None,
        };
        if spans[slot].replace((start, end)).is_some() {
            // A repeated member: the full parser's error.
            return None;
        }
        i = ws(end);
        match body.get(i)? {
            b',' => i = ws(i + 1),
            b'}' => return (ws(i + 1) == body.len()).then_some(spans),
            _ => return None,
        }
    }
}

/// The string starting with the quote at `i`, when it holds no escape and no control character:
/// where its content starts and where its closing quote is.
fn plain_string(body: &[u8], i: usize) -> Option<(usize, usize)> {
    if body.get(i) != Some(&b'"') {
        return None;
    }
    let start = i + 1;
    let rest = body.get(start..)?;
    let len = rest
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    (rest.get(len) == Some(&b'"')).then_some((start, start + len))
}

/// Just past the JSON number starting at `i` (exactly the JSON grammar: `-`, then `0` or digits
/// not starting with `0`, then an optional fraction and exponent).
fn number_end(body: &[u8], i: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        let from = i;
        while body.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    let mut i = if body.get(i) == Some(&b'-') { i + 1 } else { i };
    i = match body.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(i)?,
        _ => return None,
    };
    if body.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(body.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(body.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

/// Just past the object or array starting at `i`, a member of the request object (depth 1),
/// found by its brackets (strings skipped); `None` when it is unterminated or nests deeper than
/// `max_depth`. Its content is not checked.
fn object_end(body: &[u8], mut i: usize, max_depth: usize) -> Option<usize> {
    let mut depth = 1usize;
    loop {
        match *body.get(i)? {
            b'"' => {
                i = super::skip_string(body, i + 1);
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > max_depth {
                    return None;
                }
            }
            b'}' | b']' => {
                depth -= 1;
                if depth == 1 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// What the full parser reads from `body` (depth check, serde envelope), if it reads it.
    fn full(body: &str, max_depth: usize) -> Option<Envelope<'_>> {
        super::super::check_depth(body.as_bytes(), max_depth).ok()?;
        serde_json::from_str::<WireEnvelope<'_>>(body)
            .ok()
            .map(Envelope::from)
    }

    /// What the structural pass reads from `body`, if it reads it.
    fn scanned(body: &str, max_depth: usize) -> Option<Envelope<'_>> {
        let spans = scan_spans(body.as_bytes(), max_depth)?;
        Some(Envelope::at(body, spans))
    }

    /// The structural pass's promise: what it reads, the full parser reads the same way, unless
    /// the params it found are not JSON (then the request goes to the full parser).
    fn agrees(body: &str, max_depth: usize) {
        let Some(fast) = scanned(body, max_depth) else {
            return;
        };
        let params_are_json = fast
            .params
            .is_none_or(|p| serde_json::from_str::<serde::de::IgnoredAny>(p).is_ok());
        if params_are_json {
            assert_eq!(Some(fast), full(body, max_depth), "{body}");
        }
    }

    const SEND: &str = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi \"there\" {[}"}]}}}"#;

    #[test]
    fn the_usual_requests_are_read_as_the_full_parser_reads_them() {
        let bodies = [
            SEND,
            r#" { "params" : {} , "method":"GetTask", "id" : "a-1", "jsonrpc" : "2.0" } "#,
            "{\"jsonrpc\":\"2.0\",\n\"id\":null,\r\"method\":\"x\",\t\"params\":{\"a\":[[],{}]}}",
            r#"{"jsonrpc":"2.0","method":"GetTask","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":-0.5e+10,"method":"GetTask"}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"GetTask"}"#,
            r#"{"jsonrpc":"2.0","id":12E3,"method":"GetTask"}"#,
            "{}",
            r#"{"id":"é ünïcode","jsonrpc":"2.0","method":"m"}"#,
        ];
        for body in bodies {
            let fast = scanned(body, 64).unwrap_or_else(|| panic!("not scanned: {body}"));
            assert_eq!(Some(fast), full(body, 64), "{body}");
        }
    }

    #[test]
    fn anything_unusual_is_left_to_the_full_parser() {
        let bodies = [
            // Escapes, other members, repeated members, other value kinds.
            r#"{"jsonrpc":"2.0","id":1,"method":"Send\u004dessage","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"m"}"#,
            r#"{"json\u0072pc":"2.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","extra":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":2.0,"id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[]}"#,
            // Not a JSON number, not an object, not JSON, trailing bytes, batches.
            r#"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1e,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":nul,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m",}"#,
            r#"{"jsonrpc":"2.0","id":1 "method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\u{1}\",\"method\":\"m\"}",
            r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
            "",
            "   ",
            "\"x\"",
        ];
        for body in bodies {
            assert_eq!(scanned(body, 64), None, "{body}");
        }
    }

    #[test]
    fn depth_is_counted_as_the_depth_check_counts_it() {
        // The request object is level 1, params level 2, each bracket inside one more.
        let nested = |levels: usize| {
            let inner = "[".repeat(levels) + &"]".repeat(levels);
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{inner},"s":"[[[[[["}}}}"#
            )
        };
        for levels in 0..6 {
            let body = nested(levels);
            for max_depth in 0..10 {
                let within = super::super::check_depth(body.as_bytes(), max_depth).is_ok();
                assert_eq!(
                    scanned(&body, max_depth).is_some(),
                    within,
                    "{body} {max_depth}"
                );
                agrees(&body, max_depth);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn a_mangled_request_is_read_as_the_full_parser_reads_it_or_left_to_it(
            edits in proptest::collection::vec(
                (0usize..200, proptest::sample::select(
                    vec!["", "\"", "\\", "{", "}", "[", "]", ",", ":", " ", "0", "-", "n", "é", "\u{1}"]
                ), 0usize..3),
                1..4,
            )
        ) {
            let mut body = SEND.to_owned();
            for (at, insert, remove) in edits {
                let mut at = at.min(body.len());
                while !body.is_char_boundary(at) {
                    at -= 1;
                }
                let mut end = (at + remove).min(body.len());
                while !body.is_char_boundary(end) {
                    end += 1;
                }
                body.replace_range(at..end, insert);
            }
            agrees(&body, 64);
            agrees(&body, 4);
        }
    }
}
