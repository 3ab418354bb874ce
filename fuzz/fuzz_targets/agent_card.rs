//! The agent-card decoder: never panics; a decoded card re-encodes and decodes to itself, and
//! its validation never panics.
#![no_main]

use a2a_runtime::json;
use a2a_runtime::types::{AgentCard, Validate as _};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(card) = json::decode::<AgentCard>(data, 64) {
        let _ = card.validate();
        let out = serde_json::to_vec(&card).expect("a card encodes");
        let back: AgentCard = json::decode(&out, 128).expect("strict output decodes");
        assert_eq!(back, card);
    }
});
