::core::compile_error! {
    "#[a2a_extension] needs a uri: #[a2a_extension(uri = \"https://example.com/ext/name/v1\")]"
}
#[derive(Serialize, Deserialize)]
struct Geo;
const _: () = {
    impl ::a2a_runtime::__private::Extension for Geo {
        const URI: &'static str = "";
        const REQUIRED: bool = false;
        const DESCRIPTION: &'static str = "";
        const METADATA_KEY: &'static str = "";
        type Metadata = ::a2a_runtime::__private::serde_json::Value;
        fn __into_dyn(
            self,
        ) -> ::std::boxed::Box<dyn ::a2a_runtime::__private::DynExtension> {
            ::core::unreachable!()
        }
    }
};
