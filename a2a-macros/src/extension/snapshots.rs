//! Expansion snapshots: the attribute expanded on a few inputs, formatted with `prettyplease`,
//! compared with `tests/snapshots/<name>.expanded.rs`. Rewrite them with
//! `BLESS=1 cargo test -p a2a-macros`, then review the diff.

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;

fn snapshot(name: &str, args: TokenStream, item: TokenStream) {
    let out = super::expand(args, item);
    let file: syn::File = match syn::parse2(out.clone()) {
        Ok(f) => f,
        Err(e) => panic!("{name}: the expansion is not a list of items ({e}):\n{out}"),
    };
    let pretty = prettyplease::unparse(&file);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.expanded.rs"));
    if std::env::var_os("BLESS").is_some_and(|v| v == "1") {
        if let Err(e) = std::fs::create_dir_all(path.parent().unwrap_or(&path))
            .and_then(|()| std::fs::write(&path, &pretty))
        {
            panic!("cannot write {}: {e}", path.display());
        }
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}); run with BLESS=1 to create it",
            path.display()
        )
    });
    assert!(
        expected == pretty,
        "expansion of {name} changed; run with BLESS=1 to accept it.\n--- expected\n{expected}\n--- got\n{pretty}"
    );
}

#[test]
fn data_only_with_doc_comment() {
    snapshot(
        "data_only",
        quote!(uri = "https://example.com/ext/geo/v1"),
        quote! {
            /// Adds the caller's location.
            ///
            /// Coordinates are WGS 84.
            #[derive(Default, Serialize, Deserialize)]
            pub struct Geo {
                pub precision_m: u32,
            }
        },
    );
}

#[test]
fn every_key() {
    snapshot(
        "every_key",
        quote!(
            uri = "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1",
            required = true,
            description = "Adds timestamps.",
            metadata = String,
            metadata_key = "github.com/a2aproject/a2a-samples/extensions/timestamp/v1/timestamp"
        ),
        quote! {
            #[derive(Default, Serialize, Deserialize)]
            pub(crate) struct Timestamp {}
        },
    );
}

#[test]
fn missing_uri_gives_error_and_stub() {
    snapshot(
        "missing_uri",
        quote!(required = true),
        quote! {
            #[derive(Serialize, Deserialize)]
            struct Geo;
        },
    );
}

#[test]
fn generic_struct_gives_error_and_bounded_stub() {
    snapshot(
        "generic",
        quote!(uri = "https://example.com/ext/geo/v1"),
        quote! {
            #[derive(Serialize, Deserialize)]
            struct Geo<T> where T: Clone {
                precision: T,
            }
        },
    );
}

#[test]
fn enum_gives_error_and_item_untouched() {
    snapshot(
        "on_enum",
        quote!(uri = "https://example.com/ext/geo/v1"),
        quote! {
            enum Geo { Coarse, Fine }
        },
    );
}
