//! Procedural macros for `a2a-runtime`. Depend on `a2a-runtime` and use them from there.

use proc_macro::TokenStream;

/// Declares an A2A extension on a struct. See `a2a_runtime::extension` for the full documentation.
#[proc_macro_attribute]
pub fn a2a_extension(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}
