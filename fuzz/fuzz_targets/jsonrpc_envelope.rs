//! JSON-RPC envelope: any body POSTed to the JSON-RPC endpoint is answered with a JSON-RPC
//! response (or 204/413/408), never a panic or a 500, and a response echoes an id of at most
//! 256 bytes.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let req = actix_web::test::TestRequest::post()
        .uri("/")
        .insert_header(("content-type", "application/json"))
        .insert_header(("a2a-version", "1.0"))
        .set_payload(data.to_vec());
    let (status, body) = common::call(req);
    if status == 200 && !body.starts_with(b"data:") && !body.starts_with(b"id:") {
        let v: serde_json::Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            // A stream (text/event-stream) body.
            Err(_) => return,
        };
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        assert!(v["id"].to_string().len() <= 256, "id too long");
    }
});
