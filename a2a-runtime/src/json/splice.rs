//! JSON objects assembled from parts the [writer](super::writer) encoded already: the runtime
//! encodes a finished task once and reuses those bytes for the reply and the in-memory store.
//!
//! Keys are written as they are: they must be plain (no character that needs an escape), as
//! every key of the wire types is.

/// Writes the header of an object member, `{"<key>":` for the first one, `,"<key>":` for the
/// others; the caller writes the value (and `}` after the last member).
pub(crate) fn member(out: &mut Vec<u8>, first: bool, key: &str) {
    out.push(if first { b'{' } else { b',' });
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

/// The value of `object` when it is `{"<key>":<value>}` exactly as [`member`] and the writer
/// wrote it.
pub(crate) fn only_member<'a>(object: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let rest = object
        .strip_prefix(b"{\"")?
        .strip_prefix(key.as_bytes())?
        .strip_prefix(b"\":")?;
    rest.strip_suffix(b"}")
}

/// The members of `object` from `"<key>":` to its closing brace, when everything before them is
/// `prefix` (the object's `{` and first members, as [`member`] and the writer write them) and a
/// comma.
pub(crate) fn members_from<'a>(object: &'a [u8], prefix: &[u8], key: &str) -> Option<&'a [u8]> {
    let rest = object.strip_prefix(prefix)?.strip_prefix(b",")?;
    let named = rest
        .strip_prefix(b"\"")?
        .strip_prefix(key.as_bytes())?
        .starts_with(b"\":");
    named.then_some(rest)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn members_are_written_and_found_again() {
        let mut out = Vec::new();
        member(&mut out, true, "task");
        super::super::writer::to_writer(&mut out, &serde_json::json!({"id": "t-1"})).unwrap();
        out.push(b'}');
        assert_eq!(out, br#"{"task":{"id":"t-1"}}"#);
        assert_eq!(only_member(&out, "task"), Some(&br#"{"id":"t-1"}"#[..]));
        assert_eq!(only_member(&out, "tas"), None);
        assert_eq!(only_member(br#"{"task":1"#, "task"), None);

        let object = br#"{"id":"t-1","contextId":"c","status":{},"history":[]}"#;
        let mut prefix = Vec::new();
        member(&mut prefix, true, "id");
        prefix.extend_from_slice(br#""t-1""#);
        member(&mut prefix, false, "contextId");
        prefix.extend_from_slice(br#""c""#);
        assert_eq!(
            members_from(object, &prefix, "status"),
            Some(&br#""status":{},"history":[]}"#[..])
        );
        assert_eq!(members_from(object, &prefix, "history"), None);
        assert_eq!(members_from(object, br#"{"id":"t-2""#, "contextId"), None);
    }
}
