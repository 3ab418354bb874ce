#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Typed extension metadata: `metadata_of` / `set_metadata_of` on Message, Artifact and Task,
//! keyed by the URI or the extension's `metadata_key`, with a clear error on the wrong shape.

use a2a_runtime::a2a_extension;
use a2a_runtime::extension::{Extension, MetadataExt};
use a2a_runtime::types::{Artifact, Message, Part, Task};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Coordinates of the caller.
#[a2a_extension(uri = "https://example.com/ext/geo/v1", metadata = Point)]
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Geo {}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Point {
    lat: f64,
    lon: f64,
}

/// Stored under a key of its own.
#[a2a_extension(uri = "https://example.com/ext/score/v1", metadata = u32, metadata_key = "score")]
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Score {}

/// No metadata type: a JSON value.
#[a2a_extension(uri = "https://example.com/ext/any/v1")]
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Any {}

const OSLO: Point = Point {
    lat: 59.91,
    lon: 10.75,
};

#[test]
fn message_read_write_and_extensions_list() {
    let mut m = Message::user_text("hi");
    assert_eq!(m.metadata_of::<Geo>().unwrap(), None);
    assert!(!m.has_metadata_of::<Geo>());
    m.set_metadata_of::<Geo>(&OSLO);
    m.set_metadata_of::<Geo>(&OSLO);
    assert_eq!(m.metadata_of::<Geo>().unwrap(), Some(OSLO));
    assert_eq!(m.extensions, [Geo::URI], "listed once");
    // On the wire, keyed by the URI.
    let wire = serde_json::to_value(&m).unwrap();
    assert_eq!(
        wire["metadata"]["https://example.com/ext/geo/v1"],
        json!({"lat": 59.91, "lon": 10.75})
    );
    assert_eq!(
        wire["extensions"],
        json!(["https://example.com/ext/geo/v1"])
    );

    m.set_metadata_of::<Score>(&7);
    assert_eq!(m.metadata["score"], json!(7));
    assert_eq!(m.metadata_of::<Score>().unwrap(), Some(7));
    assert_eq!(m.extensions, [Geo::URI, Score::URI]);
}

#[test]
fn artifact_read_write_and_extensions_list() {
    let mut a = Artifact::new([Part::text("x")]);
    a.set_metadata_of::<Any>(&json!({"free": ["form"]}));
    assert_eq!(
        a.metadata_of::<Any>().unwrap(),
        Some(json!({"free": ["form"]}))
    );
    assert_eq!(a.extensions, [Any::URI]);
    // Read back from the wire.
    let back: Artifact = serde_json::from_value(serde_json::to_value(&a).unwrap()).unwrap();
    assert_eq!(
        back.metadata_of::<Any>().unwrap(),
        Some(json!({"free": ["form"]}))
    );
}

#[test]
fn task_has_metadata_but_no_extensions_list() {
    let mut t: Task = serde_json::from_value(json!({
        "id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}
    }))
    .unwrap();
    t.set_metadata_of::<Geo>(&OSLO);
    assert_eq!(t.metadata_of::<Geo>().unwrap(), Some(OSLO));
    let wire = serde_json::to_value(&t).unwrap();
    assert_eq!(wire["metadata"][Geo::URI]["lat"], json!(59.91));
    assert!(wire.get("extensions").is_none(), "{wire}");
}

#[test]
fn the_wrong_shape_is_a_clear_decode_error() {
    let mut m = Message::user_text("hi");
    m.metadata
        .insert(Geo::URI.into(), json!({"lat": "north", "lon": 1}));
    let err = m.metadata_of::<Geo>().unwrap_err();
    assert_eq!(err.uri, Geo::URI);
    assert_eq!(err.key, Geo::URI);
    let text = err.to_string();
    assert!(text.contains("https://example.com/ext/geo/v1"), "{text}");
    assert!(text.contains("invalid type"), "{text}");

    m.metadata.insert("score".into(), json!(-1));
    let err = m.metadata_of::<Score>().unwrap_err();
    assert_eq!(err.key, "score");
    assert!(err.to_string().contains("metadata[\"score\"]"), "{err}");
    assert!(std::error::Error::source(&err).is_some());
}
