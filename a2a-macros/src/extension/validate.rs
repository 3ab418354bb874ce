//! Checks with spans: the item is a plain struct, the URI is usable in the `A2A-Extensions`
//! header, and the keys make sense together.

use proc_macro2::{Span, TokenStream};
use syn::{ItemStruct, LitStr, Type};

use super::args::RawArgs;

/// The validated attribute.
pub(crate) struct Valid {
    pub(crate) uri: String,
    pub(crate) required: bool,
    pub(crate) description: String,
    pub(crate) metadata: Option<Type>,
    pub(crate) metadata_key: String,
    /// Set only when the author allows a required extension without hooks.
    pub(crate) allow_required_data_only: bool,
}

/// The item must be a struct.
pub(crate) fn item(tokens: TokenStream) -> syn::Result<ItemStruct> {
    match syn::parse2::<syn::Item>(tokens) {
        Ok(syn::Item::Struct(s)) => Ok(s),
        Ok(other) => {
            let what = match &other {
                syn::Item::Enum(e) => (e.enum_token.span, "an enum"),
                syn::Item::Fn(f) => (f.sig.fn_token.span, "a function"),
                syn::Item::Union(u) => (u.union_token.span, "a union"),
                syn::Item::Trait(t) => (t.trait_token.span, "a trait"),
                _ => (Span::call_site(), "this item"),
            };
            Err(syn::Error::new(
                what.0,
                format!(
                    "#[a2a_extension] applies to a struct, not to {}; its fields are the extension's params",
                    what.1
                ),
            ))
        }
        Err(e) => Err(e),
    }
}

/// The struct must not be generic: an extension has one URI.
pub(crate) fn shape(s: &ItemStruct) -> syn::Result<()> {
    if let Some(param) = s.generics.params.first() {
        return Err(syn::Error::new_spanned(
            param,
            "#[a2a_extension] does not support generic structs: an extension has exactly one URI; use a concrete struct",
        ));
    }
    Ok(())
}

fn check_uri(uri: &str, span: Span) -> syn::Result<()> {
    if uri.is_empty() {
        return Err(syn::Error::new(span, "the extension uri must not be empty"));
    }
    if let Some(c) = uri.chars().find(|c| *c == ',' || c.is_whitespace()) {
        let what = if c == ',' {
            "a comma".to_owned()
        } else {
            format!("whitespace ({c:?})")
        };
        return Err(syn::Error::new(
            span,
            format!(
                "the extension uri must not contain {what}: URIs travel comma-separated in the A2A-Extensions header"
            ),
        ));
    }
    let scheme_ok = uri.split_once(':').is_some_and(|(scheme, rest)| {
        !scheme.is_empty()
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            && !rest.is_empty()
    });
    if !scheme_ok {
        return Err(syn::Error::new(
            span,
            format!(
                "the extension uri must be an absolute URI with a scheme, e.g. \"https://example.com/ext/name/v1\"; got {uri:?}"
            ),
        ));
    }
    Ok(())
}

/// The doc comment of the struct, one paragraph per blank line.
fn doc_comment(s: &ItemStruct) -> String {
    let mut lines = Vec::new();
    for attr in &s.attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            lines.push(s.value().trim().to_owned());
        }
    }
    let mut out = String::new();
    for line in lines {
        if line.is_empty() {
            if !out.ends_with("\n\n") && !out.is_empty() {
                out.push_str("\n\n");
            }
        } else {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push_str(&line);
        }
    }
    out.trim().to_owned()
}

pub(crate) fn args(raw: &RawArgs, s: &ItemStruct) -> syn::Result<Valid> {
    let Some(uri) = &raw.uri else {
        return Err(syn::Error::new(
            Span::call_site(),
            "#[a2a_extension] needs a uri: #[a2a_extension(uri = \"https://example.com/ext/name/v1\")]",
        ));
    };
    let uri_text = uri.value();
    check_uri(&uri_text, uri.span())?;
    let metadata_key = match &raw.metadata_key {
        Some(k) if k.value().is_empty() => {
            return Err(syn::Error::new(k.span(), "metadata_key must not be empty"));
        }
        Some(k) => k.value(),
        None => uri_text.clone(),
    };
    let required = raw.required.as_ref().is_some_and(|r| r.value);
    let allow_required_data_only = match &raw.allow_required_data_only {
        Some(a) if a.value && !required => {
            return Err(syn::Error::new(
                a.span(),
                "allow_required_data_only is for a `required = true` extension",
            ));
        }
        Some(a) => a.value,
        None => false,
    };
    Ok(Valid {
        uri: uri_text,
        required,
        allow_required_data_only,
        description: raw
            .description
            .as_ref()
            .map_or_else(|| doc_comment(s), LitStr::value),
        metadata: raw.metadata.clone(),
        metadata_key,
    })
}
