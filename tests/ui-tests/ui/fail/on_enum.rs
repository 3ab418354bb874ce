use a2a_runtime::a2a_extension;

#[a2a_extension(uri = "https://example.com/ext/geo/v1")]
enum Geo {
    Coarse,
    Fine,
}

fn main() {
    let _ = [Geo::Coarse, Geo::Fine];
}
