//! Every key, a doc-comment description, hooks, and use through the runtime's generic API.

use a2a_runtime::a2a_extension;
use a2a_runtime::extension::{Extension, ExtensionHooks, MetadataExt};
use a2a_runtime::types::Message;
use serde::{Deserialize, Serialize};

/// Adds the caller's location.
///
/// Second paragraph.
#[a2a_extension(uri = "https://example.com/ext/geo/v1", required = true, metadata = Point, metadata_key = "geo")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Geo {
    precision_m: u32,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    lat: f64,
    lon: f64,
}

#[a2a_extension(uri = "urn:example:data-only:v1", description = "Given explicitly.")]
#[derive(Serialize, Deserialize)]
struct DataOnly {}

impl ExtensionHooks for Geo {
    type Activation = Option<u32>;
}

fn main() {
    assert_eq!(Geo::URI, "https://example.com/ext/geo/v1");
    assert!(Geo::REQUIRED);
    assert_eq!(Geo::DESCRIPTION, "Adds the caller's location.\n\nSecond paragraph.");
    assert_eq!(Geo::METADATA_KEY, "geo");
    assert_eq!(DataOnly::DESCRIPTION, "Given explicitly.");
    assert!(!DataOnly::REQUIRED);
    let mut m = Message::user_text("hi");
    m.set_metadata_of::<Geo>(&Point { lat: 1.0, lon: 2.0 });
    assert_eq!(m.metadata_of::<Geo>().unwrap(), Some(Point { lat: 1.0, lon: 2.0 }));
    assert_eq!(Geo { precision_m: 5 }.declaration().params.get("precision_m"), Some(&serde_json::json!(5)));
}
