//! ProtoJSON (lenient in, strict out): timestamps, base64 bytes, ints as strings, enums as
//! numbers. Decoding a task or a message never panics, and what decodes re-encodes to JSON
//! that decodes to the same value.
#![no_main]

use a2a_runtime::json;
use a2a_runtime::types::{Message, Task};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(task) = json::decode::<Task>(data, 64) {
        let out = serde_json::to_vec(&task).expect("a task encodes");
        let back: Task = json::decode(&out, 128).expect("strict output decodes");
        assert_eq!(back, task);
    }
    if let Ok(message) = json::decode::<Message>(data, 64) {
        let out = serde_json::to_vec(&message).expect("a message encodes");
        let back: Message = json::decode(&out, 128).expect("strict output decodes");
        assert_eq!(back, message);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(bytes) = json::Base64Bytes::decode(text) {
            assert_eq!(json::Base64Bytes::decode(&bytes.encode()).unwrap(), bytes);
        }
    }
});
