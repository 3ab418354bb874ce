use a2a_runtime::a2a_extension;
use serde::{Deserialize, Serialize};

#[a2a_extension(
    uri = "https://example.com/ext/geo/v1",
    required = false,
    required = true
)]
#[derive(Default, Serialize, Deserialize)]
struct Geo {}

fn main() {}
