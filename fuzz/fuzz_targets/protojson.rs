//! ProtoJSON (lenient in, strict out): timestamps, base64 bytes, ints as strings, enums as
//! numbers. Decoding a task or a message never panics; what decodes re-encodes to JSON that
//! decodes again and encodes to the same bytes (strict output is a fixed point), and to the
//! same value unless a timestamp had digits below the millisecond (written in milliseconds,
//! as the spec recommends) or a part was read with conflicting contents (kept only so that
//! validation can name them; such a message is refused, never re-encoded).
#![no_main]

use a2a_runtime::json;
use a2a_runtime::types::{Message, Part, PartContent, Task, Timestamp};
use libfuzzer_sys::fuzz_target;

fn conflicting(parts: &[Part]) -> bool {
    parts
        .iter()
        .any(|p| matches!(p.content, PartContent::Conflicting(_)))
}

fuzz_target!(|data: &[u8]| {
    if let Ok(task) = json::decode::<Task>(data, 64) {
        let out = serde_json::to_vec(&task).expect("a task encodes");
        let back: Task = json::decode(&out, 128).expect("strict output decodes");
        assert_eq!(serde_json::to_vec(&back).expect("a task encodes"), out);
        let messages = task.history.iter().chain(task.status.message.as_ref());
        let whole_millis = |t: Timestamp| Timestamp::from_millis(t.millis()) == Some(t);
        let clean = !messages.map(|m| &m.parts[..]).any(conflicting)
            && !task.artifacts.iter().any(|a| conflicting(&a.parts))
            && task.status.timestamp.is_none_or(whole_millis);
        if clean {
            assert_eq!(back, task);
        }
    }
    if let Ok(message) = json::decode::<Message>(data, 64) {
        let out = serde_json::to_vec(&message).expect("a message encodes");
        let back: Message = json::decode(&out, 128).expect("strict output decodes");
        assert_eq!(serde_json::to_vec(&back).expect("a message encodes"), out);
        if !conflicting(&message.parts) {
            assert_eq!(back, message);
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(bytes) = json::Base64Bytes::decode(text) {
            assert_eq!(json::Base64Bytes::decode(&bytes.encode()).unwrap(), bytes);
        }
    }
});
