use a2a_runtime::a2a_extension;

#[a2a_extension(uri = "https://example.com/ext/geo/v1")]
fn geo() -> u32 {
    7
}

fn main() {
    let _ = geo();
}
