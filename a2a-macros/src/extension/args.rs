//! The attribute's keys, parsed with `parse_nested_meta`. Every error is kept (unknown keys list
//! the valid ones; a duplicate is reported at its second occurrence).

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser as _;
use syn::{LitBool, LitStr, Type};

/// The valid keys, as listed in errors.
pub(crate) const KEYS: &[&str] = &[
    "uri",
    "required",
    "description",
    "metadata",
    "metadata_key",
    "allow_required_data_only",
];

#[derive(Default)]
pub(crate) struct RawArgs {
    pub(crate) uri: Option<LitStr>,
    pub(crate) required: Option<LitBool>,
    pub(crate) description: Option<LitStr>,
    pub(crate) metadata: Option<Type>,
    pub(crate) metadata_key: Option<LitStr>,
    pub(crate) allow_required_data_only: Option<LitBool>,
}

pub(crate) struct Args {
    pub(crate) args: RawArgs,
    pub(crate) errors: Vec<syn::Error>,
}

fn set<T>(slot: &mut Option<T>, value: T, span: Span, key: &str, errors: &mut Vec<syn::Error>) {
    if slot.is_some() {
        errors.push(syn::Error::new(
            span,
            format!("duplicate key `{key}` in #[a2a_extension]"),
        ));
    } else {
        *slot = Some(value);
    }
}

impl Args {
    pub(crate) fn parse(tokens: TokenStream) -> Self {
        let mut args = RawArgs::default();
        let mut errors = Vec::new();
        let parser = syn::meta::parser(|meta| {
            let span = syn::spanned::Spanned::span(&meta.path);
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            match key.as_str() {
                "uri" => set(
                    &mut args.uri,
                    meta.value()?.parse()?,
                    span,
                    "uri",
                    &mut errors,
                ),
                "required" => set(
                    &mut args.required,
                    meta.value()?.parse()?,
                    span,
                    "required",
                    &mut errors,
                ),
                "description" => set(
                    &mut args.description,
                    meta.value()?.parse()?,
                    span,
                    "description",
                    &mut errors,
                ),
                "metadata" => set(
                    &mut args.metadata,
                    meta.value()?.parse()?,
                    span,
                    "metadata",
                    &mut errors,
                ),
                "metadata_key" => set(
                    &mut args.metadata_key,
                    meta.value()?.parse()?,
                    span,
                    "metadata_key",
                    &mut errors,
                ),
                "allow_required_data_only" => set(
                    &mut args.allow_required_data_only,
                    meta.value()?.parse()?,
                    span,
                    "allow_required_data_only",
                    &mut errors,
                ),
                _ => {
                    let shown = if key.is_empty() {
                        "this key".to_owned()
                    } else {
                        format!("`{key}`")
                    };
                    errors.push(meta.error(format!(
                        "unknown key {shown} in #[a2a_extension]; expected one of: {}",
                        KEYS.join(", ")
                    )));
                    // Skip its value so the keys after it are still checked.
                    if meta.input.peek(syn::Token![=]) {
                        meta.value()?.parse::<syn::Expr>()?;
                    } else if meta.input.peek(syn::token::Paren) {
                        meta.input.parse::<proc_macro2::Group>()?;
                    }
                }
            }
            Ok(())
        });
        if let Err(e) = parser.parse2(tokens) {
            errors.push(e);
        }
        Self { args, errors }
    }
}
