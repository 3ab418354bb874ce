//! The client's SSE decoder: never panics, and the events do not depend on how the bytes are
//! split into network chunks.
#![no_main]

use a2a_runtime::client::SseDecoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, stream)) = data.split_first() else {
        return;
    };
    let mut whole = SseDecoder::new();
    let all = whole.feed(stream);
    let mut chunked = SseDecoder::new();
    let mut got = Vec::new();
    let step = usize::from(split).max(1);
    for chunk in stream.chunks(step) {
        got.extend(chunked.feed(chunk));
    }
    assert_eq!(all, got);
    assert_eq!(whole.has_partial(), chunked.has_partial());
});
