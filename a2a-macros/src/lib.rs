//! Procedural macros for `a2a-runtime`. Depend on `a2a-runtime` and use them from there:
//! `a2a_runtime::a2a_extension`.

use proc_macro::TokenStream;

mod extension;

/// Declares an A2A extension on a struct: `#[a2a_extension(uri = "https://…/v1")]`.
///
/// Keys: `uri` (required, absolute, no commas or whitespace), `required` (bool, default
/// `false`), `description` (default: the struct's doc comment), `metadata = Type` (the type of
/// the extension's data in `metadata`; default: a JSON value), `metadata_key = "…"` (default: the
/// URI). The struct is left as it is; its fields are the extension's params. The attribute
/// implements `a2a_runtime::extension::Extension` and registers the type. See
/// `a2a_runtime::extension` for the full documentation.
#[proc_macro_attribute]
pub fn a2a_extension(args: TokenStream, item: TokenStream) -> TokenStream {
    extension::expand(args.into(), item.into()).into()
}
