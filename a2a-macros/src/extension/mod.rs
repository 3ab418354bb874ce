//! `#[a2a_extension]`: parse the keys, validate them and the item, emit the impl and the
//! registration — or the errors plus stubs, so one mistake gives one error.

mod args;
mod expand;
mod validate;

use proc_macro2::{Span, TokenStream};

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let item_struct = match validate::item(item.clone()) {
        Ok(s) => s,
        // Not a struct: the error, and the item untouched.
        Err(e) => {
            let err = e.to_compile_error();
            return quote::quote! { #err #item };
        }
    };
    let parsed = args::Args::parse(args);
    let mut errors = parsed.errors;
    // When the keys did not parse, a "missing uri" would only repeat that error.
    let checked = match validate::args(&parsed.args, &item_struct) {
        Ok(v) => Some(v),
        Err(_) if !errors.is_empty() && parsed.args.uri.is_none() => None,
        Err(e) => {
            errors.push(e);
            None
        }
    };
    if let Err(e) = validate::shape(&item_struct) {
        errors.push(e);
    }
    let combined = errors.into_iter().reduce(|mut a, b| {
        a.combine(b);
        a
    });
    match (combined, checked) {
        (None, Some(valid)) => expand::extension(&item_struct, &valid),
        (Some(err), _) => expand::fallback(&item_struct, err),
        (None, None) => expand::fallback(
            &item_struct,
            syn::Error::new(Span::call_site(), "invalid #[a2a_extension]"),
        ),
    }
}

#[cfg(test)]
mod snapshots;
