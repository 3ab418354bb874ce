#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Timestamp {}
const _: () = {
    impl ::a2a_runtime::__private::Extension for Timestamp {
        const URI: &'static str = "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1";
        const REQUIRED: bool = true;
        const DESCRIPTION: &'static str = "Adds timestamps.";
        const METADATA_KEY: &'static str = "github.com/a2aproject/a2a-samples/extensions/timestamp/v1/timestamp";
        type Metadata = String;
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
        (&&::a2a_runtime::__private::Probe::<Timestamp>::new())
            .linked_default()
            .map(<Timestamp as ::a2a_runtime::__private::Extension>::__into_dyn)
    }
    ::a2a_runtime::__private::inventory::submit! {
        ::a2a_runtime::__private::ExtensionRegistration { uri :
        "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1", type_name :
        ::core::concat!(::core::module_path!(), "::", ::core::stringify!(Timestamp)),
        module_path : ::core::module_path!(), linked : __a2a_linked, }
    }
};
