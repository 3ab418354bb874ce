//! The emitted code: one `impl Extension` with constants and one registration record, through
//! `::a2a_runtime::__private`. Everything else is generic code in the runtime.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemStruct;

use super::validate::Valid;

pub(crate) fn extension(item: &ItemStruct, v: &Valid) -> TokenStream {
    let ident = &item.ident;
    let uri = &v.uri;
    let required = v.required;
    let description = &v.description;
    let metadata_key = &v.metadata_key;
    // Emitted only when set: the trait's default is false.
    let allow = v.allow_required_data_only.then(|| {
        quote!(
            const ALLOW_REQUIRED_DATA_ONLY: bool = true;
        )
    });
    let metadata = match &v.metadata {
        Some(ty) => quote!(#ty),
        None => quote!(::a2a_runtime::__private::serde_json::Value),
    };
    quote! {
        #item

        const _: () = {
            impl ::a2a_runtime::__private::Extension for #ident {
                const URI: &'static str = #uri;
                const REQUIRED: bool = #required;
                const DESCRIPTION: &'static str = #description;
                const METADATA_KEY: &'static str = #metadata_key;
                type Metadata = #metadata;
                #allow

                fn __into_dyn(self) -> ::std::boxed::Box<dyn ::a2a_runtime::__private::DynExtension> {
                    #[allow(unused_imports)]
                    use ::a2a_runtime::__private::{ViaData as _, ViaHooks as _};
                    (&&::a2a_runtime::__private::Probe::<Self>::new()).wrap(self)
                }
            }

            fn __a2a_linked() -> ::core::option::Option<::std::boxed::Box<dyn ::a2a_runtime::__private::DynExtension>> {
                #[allow(unused_imports)]
                use ::a2a_runtime::__private::{ViaDefault as _, ViaNoDefault as _};
                (&&::a2a_runtime::__private::Probe::<#ident>::new())
                    .linked_default()
                    .map(<#ident as ::a2a_runtime::__private::Extension>::__into_dyn)
            }

            ::a2a_runtime::__private::inventory::submit! {
                ::a2a_runtime::__private::ExtensionRegistration {
                    uri: #uri,
                    type_name: ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#ident)),
                    module_path: ::core::module_path!(),
                    linked: __a2a_linked,
                }
            }
        };
    }
}

/// The errors, the struct unchanged, and a stub impl so uses of the type do not cascade into
/// more errors.
pub(crate) fn fallback(item: &ItemStruct, error: syn::Error) -> TokenStream {
    let err = error.to_compile_error();
    let ident = &item.ident;
    let (impl_generics, ty_generics, where_clause) = item.generics.split_for_impl();
    // A generic struct (itself an error) gets its stub only where the trait's supertraits hold,
    // so the stub adds no error of its own.
    let bound = quote! {
        #ident #ty_generics: ::a2a_runtime::__private::serde::Serialize
            + ::a2a_runtime::__private::serde::de::DeserializeOwned
            + ::core::marker::Send
            + ::core::marker::Sync
            + 'static
    };
    let where_clause = match where_clause {
        _ if item.generics.params.is_empty() => quote!(#where_clause),
        Some(w) if !w.predicates.is_empty() => {
            let preds = &w.predicates;
            let comma = (!w.predicates.trailing_punct()).then(|| quote!(,));
            quote!(where #preds #comma #bound)
        }
        _ => quote!(where #bound),
    };
    quote! {
        #err
        #item

        const _: () = {
            impl #impl_generics ::a2a_runtime::__private::Extension for #ident #ty_generics #where_clause {
                const URI: &'static str = "";
                const REQUIRED: bool = false;
                const DESCRIPTION: &'static str = "";
                const METADATA_KEY: &'static str = "";
                type Metadata = ::a2a_runtime::__private::serde_json::Value;

                fn __into_dyn(self) -> ::std::boxed::Box<dyn ::a2a_runtime::__private::DynExtension> {
                    ::core::unreachable!()
                }
            }
        };
    }
}
