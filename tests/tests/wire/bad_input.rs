//! Hostile and broken bodies: the decoder (`json::decode`) and plain serde_json into our types
//! return errors, with the right JSON-RPC code, and never panic or overflow the stack.

use a2a_runtime::error::A2aError;
use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
use a2a_runtime::types::{
    AgentCard, ListTasksRequest, Message, PartContent, SendMessageRequest, StreamResponse, Task,
    Validate,
};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The `params` of the §9.2 SendMessage request, as compact JSON.
fn send_params() -> String {
    let env: Value = serde_json::from_str(&fixture("send_message.request.jsonrpc.json")).unwrap();
    serde_json::to_string(&env["params"]).unwrap()
}

/// Both decoding paths fail; returns the production decoder's error.
fn both_fail<T: DeserializeOwned + std::fmt::Debug>(body: &[u8]) -> A2aError {
    assert!(
        serde_json::from_slice::<T>(body).is_err(),
        "serde_json accepted {:?}",
        String::from_utf8_lossy(&body[..body.len().min(200)])
    );
    json::decode::<T>(body, DEFAULT_MAX_DEPTH).unwrap_err()
}

fn assert_parse_error(err: &A2aError) {
    assert!(matches!(err, A2aError::Parse(_)), "{err:?}");
    assert_eq!(err.code(), -32700);
}

fn nested_arrays(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
}

fn nested_objects(depth: usize) -> String {
    format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}

fn message_with_data(data: &str) -> String {
    format!(r#"{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"data":{data}}}]}}}}"#)
}

// ---------------------------------------------------------------------------------------------
// Truncation
// ---------------------------------------------------------------------------------------------

fn every_prefix_fails<T: DeserializeOwned + std::fmt::Debug>(body: &str) {
    let body = body.trim_end().as_bytes();
    for len in 0..body.len() {
        let err = both_fail::<T>(&body[..len]);
        assert_parse_error(&err);
    }
    // The whole body is fine.
    json::decode::<T>(body, DEFAULT_MAX_DEPTH).unwrap();
}

#[test]
fn every_truncation_of_a_send_message_request_is_a_parse_error() {
    every_prefix_fails::<SendMessageRequest>(&send_params());
}

#[test]
fn every_truncation_of_the_agent_card_is_a_parse_error() {
    every_prefix_fails::<AgentCard>(&fixture("agent_card.json"));
}

#[test]
fn every_truncation_of_stream_events_is_a_parse_error() {
    for name in [
        "stream_1_task.json",
        "stream_2_status_update_working.json",
        "stream_4_artifact_update_last_chunk.json",
    ] {
        every_prefix_fails::<StreamResponse>(&fixture(name));
    }
}

// ---------------------------------------------------------------------------------------------
// Depth
// ---------------------------------------------------------------------------------------------

#[test]
fn depth_10000_inside_data_is_rejected_without_overflow() {
    for data in [nested_arrays(10_000, ""), nested_objects(10_000)] {
        let body = message_with_data(&data);
        let err = both_fail::<SendMessageRequest>(body.as_bytes());
        assert_parse_error(&err);
        assert!(err.to_string().contains("nested deeper"), "{err}");
        // Even with the depth check switched off, serde_json's own recursion limit holds.
        let err = json::decode::<SendMessageRequest>(body.as_bytes(), usize::MAX).unwrap_err();
        assert_parse_error(&err);
    }
}

#[test]
fn depth_10000_as_plain_arrays_is_rejected_without_overflow() {
    let body = nested_arrays(10_000, "1");
    let err = json::decode::<SendMessageRequest>(body.as_bytes(), DEFAULT_MAX_DEPTH).unwrap_err();
    assert_parse_error(&err);
    // Without the depth check the body is well-formed JSON of the wrong shape (an array where an
    // object is expected), found before any recursion.
    let err = json::decode::<SendMessageRequest>(body.as_bytes(), usize::MAX).unwrap_err();
    assert_eq!(err.code(), -32602, "{err}");
    // Into a free-form value, serde_json's recursion limit holds.
    for max_depth in [DEFAULT_MAX_DEPTH, usize::MAX] {
        let err = json::decode::<Value>(body.as_bytes(), max_depth).unwrap_err();
        assert_parse_error(&err);
    }
    assert!(serde_json::from_str::<SendMessageRequest>(&body).is_err());
    assert!(serde_json::from_str::<Task>(&body).is_err());
    // Unbalanced: opened and never closed.
    let open = "[".repeat(10_000);
    assert_parse_error(&both_fail::<Task>(open.as_bytes()));
    let open_objects = r#"{"metadata":"#.repeat(10_000);
    assert_parse_error(&both_fail::<Task>(open_objects.as_bytes()));
}

#[test]
fn depth_10000_in_metadata_is_rejected() {
    let body = format!(
        r#"{{"id":"t","status":{{"state":"TASK_STATE_WORKING"}},"metadata":{}}}"#,
        nested_objects(10_000)
    );
    assert_parse_error(&both_fail::<Task>(body.as_bytes()));
}

#[test]
fn the_depth_limit_is_exact() {
    // The body is 4 levels deep before `data` (object, message, parts, part).
    let at_limit = message_with_data(&nested_arrays(DEFAULT_MAX_DEPTH - 4, ""));
    let req: SendMessageRequest = json::decode(at_limit.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    assert!(matches!(
        req.message.parts[0].content,
        PartContent::Data(Value::Array(_))
    ));
    let over = message_with_data(&nested_arrays(DEFAULT_MAX_DEPTH - 3, ""));
    assert_parse_error(
        &json::decode::<SendMessageRequest>(over.as_bytes(), DEFAULT_MAX_DEPTH).unwrap_err(),
    );
    // Brackets inside strings do not count.
    let in_string = message_with_data(&format!("\"{}\"", "[{".repeat(10_000)));
    json::decode::<SendMessageRequest>(in_string.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------------

fn with_history_length(n: &str) -> String {
    format!(
        r#"{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"x"}}]}},"configuration":{{"historyLength":{n}}}}}"#
    )
}

fn with_metadata_number(n: &str) -> String {
    format!(
        r#"{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"x"}}],"metadata":{{"n":{n}}}}}}}"#
    )
}

#[test]
fn numbers_beyond_f64_are_parse_errors_everywhere() {
    for n in ["1e400", "-1e400", "1.5e99999"] {
        assert_parse_error(&both_fail::<SendMessageRequest>(
            with_history_length(n).as_bytes(),
        ));
        assert_parse_error(&both_fail::<SendMessageRequest>(
            with_metadata_number(n).as_bytes(),
        ));
        assert_parse_error(&both_fail::<SendMessageRequest>(
            message_with_data(n).as_bytes(),
        ));
    }
}

#[test]
fn huge_integers_in_int32_fields_are_invalid_params_naming_the_field() {
    for n in [
        "99999999999999999999999999",
        "-99999999999999999999999999",
        "\"99999999999999999999999999\"",
        "18446744073709551616",
        "9223372036854775807",
    ] {
        let err = both_fail::<SendMessageRequest>(with_history_length(n).as_bytes());
        assert_eq!(err.code(), -32602, "{n}: {err}");
        assert!(
            err.to_string().contains("configuration.historyLength"),
            "{err}"
        );
    }
    let err = both_fail::<ListTasksRequest>(br#"{"pageSize": 99999999999999999999999999}"#);
    assert!(err.to_string().contains("pageSize"), "{err}");
}

/// Struct values (metadata, data) are google.protobuf.Value: numbers beyond 64-bit integers are
/// doubles, as in every ProtoJSON implementation. Integers that fit 64 bits stay exact.
#[test]
fn huge_integers_in_metadata_and_data_become_doubles_and_64_bit_integers_stay_exact() {
    let req: SendMessageRequest = json::decode(
        with_metadata_number("99999999999999999999999999").as_bytes(),
        64,
    )
    .unwrap();
    let n = &req.message.metadata["n"];
    assert!(n.is_f64(), "{n:?}");
    assert_eq!(n.as_f64(), Some(1e26));
    for exact in [
        "1152921504606846976",  // 2^60
        "1152921504606846977",  // 2^60 + 1 (not representable as f64)
        "18446744073709551615", // u64::MAX
        "-9223372036854775808", // i64::MIN
    ] {
        let req: SendMessageRequest =
            json::decode(message_with_data(exact).as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
        let out = serde_json::to_string(&req).unwrap();
        assert!(out.contains(&format!(r#""data":{exact}"#)), "{out}");
        let req: SendMessageRequest =
            json::decode(with_metadata_number(exact).as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
        let out = serde_json::to_string(&req).unwrap();
        assert!(out.contains(&format!(r#""n":{exact}"#)), "{out}");
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

#[test]
fn invalid_utf8_is_a_parse_error() {
    let valid = send_params().into_bytes();
    // Inside a string value.
    let mut in_string = valid.clone();
    let at = in_string.windows(4).position(|w| w == b"Book").unwrap();
    in_string[at] = 0xff;
    in_string[at + 1] = 0xfe;
    assert_parse_error(&both_fail::<SendMessageRequest>(&in_string));
    // Truncated multi-byte sequence (the first byte of "…" only).
    let bad = "{\"id\":\"t\",\"status\":{\"state\":\"TASK_STATE_WORKING\",\"message\":{\"messageId\":\"\u{e2}";
    let mut bytes = bad.as_bytes()[..bad.len() - 1].to_vec();
    bytes.extend_from_slice(&[0xe2, 0x80, b'"', b'}', b'}', b'}']);
    assert_parse_error(&both_fail::<Task>(&bytes));
    // In a key, and outside any string.
    assert_parse_error(&both_fail::<Task>(b"{\"i\xc3\x28\":\"t\"}"));
    assert_parse_error(&both_fail::<Task>(b"{\xff}"));
    // A UTF-8 byte-order mark is not JSON.
    let mut bom = vec![0xef, 0xbb, 0xbf];
    bom.extend_from_slice(&valid);
    assert_parse_error(&both_fail::<SendMessageRequest>(&bom));
    // UTF-16 is not accepted either.
    let utf16: Vec<u8> = "{}".encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
    assert_parse_error(&both_fail::<Task>(&utf16));
}

#[test]
fn lone_surrogate_escapes_are_parse_errors_and_pairs_are_fine() {
    assert_parse_error(&both_fail::<Message>(
        br#"{"messageId":"\ud800","role":"ROLE_USER","parts":[{"text":"x"}]}"#,
    ));
    assert_parse_error(&both_fail::<Message>(
        br#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"\udc00x"}]}"#,
    ));
    let ok: Message = json::decode(
        br#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"\ud83d\ude00"}]}"#,
        DEFAULT_MAX_DEPTH,
    )
    .unwrap();
    assert_eq!(ok.text(), "\u{1F600}");
}

#[test]
fn raw_control_characters_in_strings_are_parse_errors() {
    assert_parse_error(&both_fail::<Message>(
        b"{\"messageId\":\"a\nb\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"x\"}]}",
    ));
    assert_parse_error(&both_fail::<Message>(
        b"{\"messageId\":\"a\0b\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"x\"}]}",
    ));
}

// ---------------------------------------------------------------------------------------------
// Empty and degenerate bodies
// ---------------------------------------------------------------------------------------------

#[test]
fn empty_and_blank_bodies_are_parse_errors() {
    for body in [&b""[..], b" ", b"\n\t\r ", b"\0"] {
        assert_parse_error(&both_fail::<SendMessageRequest>(body));
        assert_parse_error(&both_fail::<AgentCard>(body));
    }
}

#[test]
fn json_of_the_wrong_kind_at_the_top_is_invalid_params() {
    for body in [&b"null"[..], b"1", b"\"text\"", b"true"] {
        let err = both_fail::<SendMessageRequest>(body);
        assert_eq!(err.code(), -32602, "{err}");
    }
}

#[test]
fn duplicate_fields_are_invalid_params() {
    let err = both_fail::<Task>(br#"{"id":"a","id":"b","status":{"state":"TASK_STATE_WORKING"}}"#);
    assert_eq!(err.code(), -32602, "{err}");
    assert!(err.to_string().contains("duplicate"), "{err}");
    // A name and its snake_case alias are the same field.
    let err = both_fail::<Message>(br#"{"messageId":"a","message_id":"b"}"#);
    assert_eq!(err.code(), -32602, "{err}");
}

#[test]
fn a_megabyte_of_text_is_fine() {
    let text = "x".repeat(1 << 20);
    let body = format!(
        r#"{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}}}"#
    );
    let req: SendMessageRequest = json::decode(body.as_bytes(), DEFAULT_MAX_DEPTH).unwrap();
    req.validate().unwrap();
    assert_eq!(req.message.text().len(), 1 << 20);
}

// ---------------------------------------------------------------------------------------------
// Fuzz: arbitrary and mutated bodies never panic
// ---------------------------------------------------------------------------------------------

fn decode_all(body: &[u8]) {
    let _ = json::decode::<SendMessageRequest>(body, DEFAULT_MAX_DEPTH);
    let _ = json::decode::<StreamResponse>(body, DEFAULT_MAX_DEPTH);
    let _ = json::decode::<AgentCard>(body, DEFAULT_MAX_DEPTH);
    let _ = json::decode::<Task>(body, DEFAULT_MAX_DEPTH);
    let _ = serde_json::from_slice::<SendMessageRequest>(body);
    let _ = serde_json::from_slice::<StreamResponse>(body);
    if let Ok(req) = json::decode::<SendMessageRequest>(body, DEFAULT_MAX_DEPTH) {
        let _ = req.validate();
        // Whatever parsed can be emitted, and re-parses to the same value.
        let out = serde_json::to_vec(&req).unwrap();
        let again: SendMessageRequest = json::decode(&out, usize::MAX).unwrap();
        assert_eq!(again, req);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..256)) {
        decode_all(&body);
    }

    #[test]
    fn mutated_valid_bodies_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut body = send_params().into_bytes();
        for (at, byte) in edits {
            let i = at.index(body.len());
            body[i] = byte;
        }
        decode_all(&body);
    }

    #[test]
    fn json_structural_soup_never_panics(
        body in proptest::collection::vec(
            prop::sample::select(&[
                "{", "}", "[", "]", ",", ":", "\"message\"", "\"parts\"", "\"data\"", "\"text\"",
                "\"raw\"", "\"role\"", "1", "null", "\"x\"", "\"ROLE_USER\"", "1e400", "-0",
            ][..]),
            0..64,
        ),
    ) {
        decode_all(body.concat().as_bytes());
    }
}

#[test]
fn a_part_with_several_contents_names_them_all_in_order() {
    use a2a_runtime::types::Part;
    let one: Part = json::decode(br#"{"text":"a"}"#, DEFAULT_MAX_DEPTH).unwrap();
    assert_eq!(one.content, PartContent::Text("a".into()));
    assert!(one.validate().is_ok());
    let two: Part = json::decode(br#"{"url":"u","text":"a"}"#, DEFAULT_MAX_DEPTH).unwrap();
    assert_eq!(two.content, PartContent::Conflicting(vec!["url", "text"]));
    let three: Part =
        json::decode(br#"{"text":"a","data":1,"text":"b"}"#, DEFAULT_MAX_DEPTH).unwrap();
    assert_eq!(
        three.content,
        PartContent::Conflicting(vec!["text", "data", "text"])
    );
    let err = three.validate().unwrap_err();
    assert!(err.to_string().contains("found text, data, text"), "{err}");
}
