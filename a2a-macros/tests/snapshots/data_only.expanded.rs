/// Adds the caller's location.
///
/// Coordinates are WGS 84.
#[derive(Default, Serialize, Deserialize)]
pub struct Geo {
    pub precision_m: u32,
}
const _: () = {
    impl ::a2a_runtime::__private::Extension for Geo {
        const URI: &'static str = "https://example.com/ext/geo/v1";
        const REQUIRED: bool = false;
        const DESCRIPTION: &'static str = "Adds the caller's location.\n\nCoordinates are WGS 84.";
        const METADATA_KEY: &'static str = "https://example.com/ext/geo/v1";
        type Metadata = ::a2a_runtime::__private::serde_json::Value;
        fn __into_dyn(
            self,
        ) -> ::std::boxed::Box<dyn ::a2a_runtime::__private::DynExtension> {
            #[allow(unused_imports)]
            use ::a2a_runtime::__private::{ViaData as _, ViaHooks as _};
            (&&::a2a_runtime::__private::Probe::<Self>::new()).wrap(self)
        }
    }
    fn __a2a_linked() -> ::core::option::Option<
        ::std::boxed::Box<dyn ::a2a_runtime::__private::DynExtension>,
    > {
        #[allow(unused_imports)]
        use ::a2a_runtime::__private::{ViaDefault as _, ViaNoDefault as _};
        (&&::a2a_runtime::__private::Probe::<Geo>::new())
            .linked_default()
            .map(<Geo as ::a2a_runtime::__private::Extension>::__into_dyn)
    }
    ::a2a_runtime::__private::inventory::submit! {
        ::a2a_runtime::__private::ExtensionRegistration { uri :
        "https://example.com/ext/geo/v1", type_name :
        ::core::concat!(::core::module_path!(), "::", ::core::stringify!(Geo)),
        module_path : ::core::module_path!(), linked : __a2a_linked, }
    }
};
