//! The REST path router: any method, path and query reach a route or a 404/405, and a route
//! answers with a 4xx or a result, never a panic or a 500.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    // `path?query` then, after a newline, an optional body.
    let (target, body) = text.split_once('\n').unwrap_or((text, ""));
    let uri = format!("/{}", target.trim_start_matches('/'));
    if actix_web::http::Uri::try_from(uri.as_str()).is_err() {
        return;
    }
    let req = match pick % 3 {
        0 => actix_web::test::TestRequest::get(),
        1 => actix_web::test::TestRequest::post(),
        _ => actix_web::test::TestRequest::delete(),
    };
    let req = req
        .uri(&uri)
        .insert_header(("a2a-version", "1.0"))
        .insert_header(("content-type", "application/a2a+json"))
        .set_payload(body.as_bytes().to_vec());
    common::call(req);
});
