//! The `A2A-Extensions` header, parsed and formatted in one place (server, client and the
//! negotiation all use these two functions).
//!
//! A value is a comma-separated list of extension URIs; repeated headers are merged. Parsing
//! trims whitespace, drops empty items and duplicates (first occurrence's order kept) in time
//! linear in the header's length, and refuses more than [`MAX_EXTENSION_URIS`] distinct URIs.

use crate::error::A2aError;

/// The most distinct extension URIs one `A2A-Extensions` header set may list (64). A server
/// declares a handful; a longer list is refused rather than negotiated.
pub const MAX_EXTENSION_URIS: usize = 64;

/// Why an `A2A-Extensions` header was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExtensionsHeaderError {
    /// More distinct URIs than [`MAX_EXTENSION_URIS`].
    #[error(
        "the A2A-Extensions header lists more than {max} extension URIs; send only the extensions this request uses"
    )]
    TooMany {
        /// The limit.
        max: usize,
    },
}

impl From<ExtensionsHeaderError> for A2aError {
    fn from(e: ExtensionsHeaderError) -> Self {
        A2aError::InvalidRequest(e.to_string())
    }
}

/// Parses `A2A-Extensions` values (repeated headers allowed): comma-separated, whitespace
/// trimmed, empty items and duplicates dropped, first-seen order kept; more than
/// [`MAX_EXTENSION_URIS`] distinct URIs is an error.
///
/// ```
/// use a2a_runtime::extension::{parse_extensions_header, MAX_EXTENSION_URIS};
/// let uris = parse_extensions_header(["https://a/v1, https://b/v1", "https://a/v1"]).unwrap();
/// assert_eq!(uris, ["https://a/v1", "https://b/v1"]);
/// let many = (0..=MAX_EXTENSION_URIS).map(|i| format!("urn:x:{i}")).collect::<Vec<_>>().join(",");
/// assert!(parse_extensions_header([many.as_str()]).is_err());
/// ```
pub fn parse_extensions_header<'a>(
    values: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<String>, ExtensionsHeaderError> {
    let mut uris: Vec<String> = Vec::new();
    for value in values {
        for item in value.split(',') {
            let item = item.trim();
            // Each item is compared with at most `MAX_EXTENSION_URIS` kept URIs: linear in the
            // header's length (duplicates do not count toward the cap).
            if item.is_empty() || uris.iter().any(|u| u == item) {
                continue;
            }
            if uris.len() == MAX_EXTENSION_URIS {
                return Err(ExtensionsHeaderError::TooMany {
                    max: MAX_EXTENSION_URIS,
                });
            }
            uris.push(item.to_owned());
        }
    }
    Ok(uris)
}

/// Formats URIs as one `A2A-Extensions` value (`a, b`).
///
/// ```
/// assert_eq!(a2a_runtime::extension::format_extensions_header(["urn:a", "urn:b"]), "urn:a, urn:b");
/// ```
pub fn format_extensions_header<I, S>(uris: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    for (i, uri) in uris.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(uri.as_ref());
    }
    out
}
