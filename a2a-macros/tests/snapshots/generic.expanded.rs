::core::compile_error! {
    "#[a2a_extension] does not support generic structs: an extension has exactly one URI; use a concrete struct"
}
#[derive(Serialize, Deserialize)]
struct Geo<T>
where
    T: Clone,
{
    precision: T,
}
const _: () = {
    impl<T> ::a2a_runtime::__private::Extension for Geo<T>
    where
        T: Clone,
        Geo<
            T,
        >: ::a2a_runtime::__private::serde::Serialize
            + ::a2a_runtime::__private::serde::de::DeserializeOwned
            + ::core::marker::Send + ::core::marker::Sync + 'static,
    {
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
