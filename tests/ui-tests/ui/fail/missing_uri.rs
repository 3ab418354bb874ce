use a2a_runtime::a2a_extension;
use serde::{Deserialize, Serialize};

/// An extension without its identity.
#[a2a_extension(required = true)]
#[derive(Default, Serialize, Deserialize)]
struct Geo {
    precision_m: u32,
}

fn main() {
    let _ = Geo::default().precision_m;
}
