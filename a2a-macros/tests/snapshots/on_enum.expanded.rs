::core::compile_error! {
    "#[a2a_extension] applies to a struct, not to an enum; its fields are the extension's params"
}
enum Geo {
    Coarse,
    Fine,
}
