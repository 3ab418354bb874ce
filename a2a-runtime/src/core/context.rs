//! [`RequestContext`]: what the core knows about one request, whatever binding carried it.

use std::fmt;
use std::sync::Arc;

use crate::extension::Negotiated;
use crate::store::Scope;

/// The authenticated caller of a request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Principal {
    /// A stable identifier; records are owned by it.
    pub id: String,
    /// False for the anonymous principal.
    pub authenticated: bool,
}

impl Principal {
    /// The id of the anonymous principal.
    pub const ANONYMOUS_ID: &'static str = "anonymous";

    /// The principal of unauthenticated requests.
    pub fn anonymous() -> Self {
        Self {
            id: Self::ANONYMOUS_ID.to_owned(),
            authenticated: false,
        }
    }

    /// An authenticated principal.
    pub fn authenticated(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            authenticated: true,
        }
    }
}

impl Default for Principal {
    fn default() -> Self {
        Self::anonymous()
    }
}

/// Request headers (service parameters and anything else), independent of the HTTP library.
///
/// Names are compared case-insensitively; repeated headers keep every value in order. All names
/// and values share one buffer, so building it costs two allocations, not two per header.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RequestHeaders {
    /// Names (lowercase) and values, back to back.
    text: String,
    /// For each header: where its name ends and where its value ends in `text`.
    ends: Vec<(usize, usize)>,
}

impl RequestHeaders {
    /// No headers.
    pub fn new() -> Self {
        Self::default()
    }

    /// No headers, with room for `headers` headers of `bytes` bytes in all.
    pub fn with_capacity(headers: usize, bytes: usize) -> Self {
        Self {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(headers),
        }
    }

    /// Adds a header (the name is stored lowercase).
    pub fn push(&mut self, name: &str, value: impl AsRef<str>) {
        let start = self.text.len();
        self.text.push_str(name);
        self.text[start..].make_ascii_lowercase();
        let name_end = self.text.len();
        self.text.push_str(value.as_ref());
        self.ends.push((name_end, self.text.len()));
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.get_all(name).next()
    }

    /// Every value of `name`, in order.
    pub fn get_all<'s, 'n>(&'s self, name: &'n str) -> impl Iterator<Item = &'s str> + use<'s, 'n> {
        let bytes = self.text.as_bytes();
        // Stored names are lowercase: a lowercase name (the usual) is compared as is.
        let lower = !name.bytes().any(|b| b.is_ascii_uppercase());
        self.spans()
            .filter(move |&(start, name_end, _)| {
                // Lengths first: most names are told apart without looking at them.
                name_end - start == name.len()
                    && bytes.get(start..name_end).is_some_and(|n| {
                        if lower {
                            n == name.as_bytes()
                        } else {
                            n.eq_ignore_ascii_case(name.as_bytes())
                        }
                    })
            })
            .map(|(_, name_end, value_end)| self.value_at(name_end, value_end))
    }

    /// The values of the headers whose (lowercase) name `matches`, in order: one pass for
    /// several names.
    pub(crate) fn values_where<'s>(
        &'s self,
        matches: impl Fn(&[u8]) -> bool + 's,
    ) -> impl Iterator<Item = &'s str> + 's {
        let bytes = self.text.as_bytes();
        self.spans()
            .filter(move |&(start, name_end, _)| bytes.get(start..name_end).is_some_and(&matches))
            .map(|(_, name_end, value_end)| self.value_at(name_end, value_end))
    }

    fn value_at(&self, name_end: usize, value_end: usize) -> &str {
        self.text.get(name_end..value_end).unwrap_or_default()
    }

    /// Every header, names lowercase.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.spans().map(|(start, name_end, value_end)| {
            (
                self.text.get(start..name_end).unwrap_or_default(),
                self.value_at(name_end, value_end),
            )
        })
    }

    /// Where each header's name starts, where it ends (its value starts) and where its value
    /// ends, in `text`.
    fn spans(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&(name_end, value_end)| {
            let span = (start, name_end, value_end);
            start = value_end;
            span
        })
    }

    /// The number of headers.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there is no header.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

impl fmt::Debug for RequestHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print credentials.
        let mut m = f.debug_map();
        for (n, v) in self.iter() {
            let sensitive = matches!(n, "authorization" | "cookie" | "proxy-authorization")
                || n.contains("api-key")
                || n.contains("token");
            m.entry(&n, if sensitive { &"<redacted>" } else { &v });
        }
        m.finish()
    }
}

impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for RequestHeaders {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut h = Self::new();
        for (k, v) in iter {
            h.push(k.as_ref(), v);
        }
        h
    }
}

/// Everything the core needs to know about a request besides its payload.
///
/// Bindings build one per request; the extension negotiation fills [`RequestContext::extensions`]
/// before the operation runs, and the agent sees it through its
/// [`AgentContext`](crate::core::AgentContext).
#[derive(Clone, Debug, Default)]
pub struct RequestContext {
    /// The `A2A-Version` the client sent (`None` when absent or empty, which means 0.3).
    pub protocol_version: Option<String>,
    /// The tenant: REST path prefix, or the `tenant` field of the request.
    pub tenant: String,
    /// The authenticated caller (anonymous until an authenticator is configured).
    pub principal: Principal,
    /// The request's headers.
    pub headers: RequestHeaders,
    /// The extensions requested and activated for this request.
    pub extensions: Arc<Negotiated>,
}

impl RequestContext {
    /// A context for protocol version 1.0, anonymous, no tenant.
    pub fn v1() -> Self {
        Self {
            protocol_version: Some(crate::PROTOCOL_VERSION.to_owned()),
            ..Self::default()
        }
    }

    /// The store scope of this request: its tenant and principal.
    pub fn scope(&self) -> Scope {
        Scope::new(self.tenant.clone(), self.principal.id.clone())
    }

    /// True when the extension with `uri` was activated for this request.
    pub fn is_active_uri(&self, uri: &str) -> bool {
        self.extensions.is_active_uri(uri)
    }

    /// True when `E` was activated for this request.
    pub fn is_active<E: crate::extension::Extension>(&self) -> bool {
        self.extensions.is_active::<E>()
    }

    /// `E`'s activation value, when `E` was activated for this request.
    pub fn extension<E: crate::extension::ExtensionHooks>(&self) -> Option<E::Activation> {
        self.extensions.extension::<E>()
    }
}
