use a2a_runtime::a2a_extension;
use serde::{Deserialize, Serialize};

#[a2a_extension(uri = "example.com/ext/geo/v1")]
#[derive(Default, Serialize, Deserialize)]
struct Geo {}

fn main() {}
