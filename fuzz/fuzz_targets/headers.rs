//! `A2A-Version` and `A2A-Extensions` parsing: never panics; the URIs parsed are trimmed,
//! non-empty, distinct, at most 64, and format/parse round-trips.
#![no_main]

use a2a_runtime::extension::{
    MAX_EXTENSION_URIS, format_extensions_header, parse_extensions_header,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = a2a_runtime::core::check_version(Some(text));
    let values: Vec<&str> = text.split('\n').collect();
    if let Ok(uris) = parse_extensions_header(values.iter().copied()) {
        assert!(uris.len() <= MAX_EXTENSION_URIS);
        for (i, u) in uris.iter().enumerate() {
            assert!(!u.is_empty() && u.trim() == u && !u.contains(','), "{u:?}");
            assert!(!uris[..i].contains(u), "duplicate {u:?}");
        }
        let again = parse_extensions_header([format_extensions_header(&uris).as_str()]).unwrap();
        assert_eq!(again, uris);
    }
});
