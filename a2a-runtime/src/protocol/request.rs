//! What is known about one request besides its payload, whatever binding carried it: its
//! caller ([`Principal`]), its headers ([`RequestHeaders`]) and the end it runs on ([`Side`]).
//! The [`RequestContext`](crate::extension::RequestContext) holds them with the negotiated
//! extensions.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// The authenticated caller of a request.
///
/// Records are owned by its [`id`](Principal::id); the tenants, roles and claims are what the
/// authenticator learnt about the caller, for authorization and for the agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    // Borrowed for the anonymous principal, so that a request without authentication allocates
    // no id (nor a copy for its scope).
    pub(crate) id: Cow<'static, str>,
    /// False for the anonymous principal.
    pub authenticated: bool,
    /// The tenants the caller belongs to (as its credential says; the authorizer may add more).
    pub tenants: Vec<String>,
    /// The caller's roles or scopes.
    pub roles: Vec<String>,
    /// The claims of the caller's credential (a JWT's payload), when it has any.
    pub claims: Option<Arc<serde_json::Map<String, serde_json::Value>>>,
}

impl Principal {
    /// The id of the anonymous principal.
    pub const ANONYMOUS_ID: &'static str = "anonymous";

    /// A stable identifier of the caller; records are owned by it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The principal of unauthenticated requests.
    pub fn anonymous() -> Self {
        Self {
            id: Cow::Borrowed(Self::ANONYMOUS_ID),
            authenticated: false,
            tenants: Vec::new(),
            roles: Vec::new(),
            claims: None,
        }
    }

    /// An authenticated principal.
    pub fn authenticated(id: impl Into<String>) -> Self {
        Self {
            id: Cow::Owned(id.into()),
            authenticated: true,
            ..Self::anonymous()
        }
    }

    /// The same principal, member of `tenants`.
    pub fn with_tenants<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tenants: I) -> Self {
        self.tenants = tenants.into_iter().map(Into::into).collect();
        self
    }

    /// The same principal, with `roles`.
    pub fn with_roles<I: IntoIterator<Item = S>, S: Into<String>>(mut self, roles: I) -> Self {
        self.roles = roles.into_iter().map(Into::into).collect();
        self
    }

    /// The same principal, with the claims of its credential.
    pub fn with_claims(mut self, claims: serde_json::Map<String, serde_json::Value>) -> Self {
        self.claims = Some(Arc::new(claims));
        self
    }

    /// True when the caller is a member of `tenant`.
    pub fn belongs_to(&self, tenant: &str) -> bool {
        self.tenants.iter().any(|t| t == tenant)
    }

    /// True when the caller has `role`.
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r == role)
    }
}

impl Default for Principal {
    fn default() -> Self {
        Self::anonymous()
    }
}

/// Request headers (service parameters and anything else), independent of the HTTP library.
///
/// Names are compared case-insensitively; repeated headers keep every value in order. Values
/// are kept as received and checked to be UTF-8 when read: one that is not is never returned.
// All names and values share one buffer: building it costs two allocations, not two per header.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RequestHeaders {
    /// Names (lowercase ASCII) and values, back to back.
    bytes: Vec<u8>,
    /// For each header: where its name ends and where its value ends in `bytes`.
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
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(headers),
        }
    }

    /// Adds a header (the name is stored lowercase).
    pub fn push(&mut self, name: &str, value: impl AsRef<str>) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(name.as_bytes());
        if let Some(stored) = self.bytes.get_mut(start..) {
            stored.make_ascii_lowercase();
        }
        self.push_value(value.as_ref().as_bytes());
    }

    /// Adds a header as an HTTP library hands it over: `name` already lowercase (as
    /// `http::HeaderName` keeps it), `value` not checked yet.
    #[cfg(any(feature = "server", test))]
    pub(crate) fn push_received(&mut self, name: &str, value: &[u8]) {
        self.bytes.extend_from_slice(name.as_bytes());
        self.push_value(value);
    }

    fn push_value(&mut self, value: &[u8]) {
        let name_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.ends.push((name_end, self.bytes.len()));
    }

    /// The first value of `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.get_all(name).next()
    }

    /// Every value of `name` (case-insensitive), in the order received.
    pub fn get_all<'s, 'n>(&'s self, name: &'n str) -> impl Iterator<Item = &'s str> + use<'s, 'n> {
        // Stored names are lowercase: a lowercase name (the usual) is compared as is.
        let lower = !name.bytes().any(|b| b.is_ascii_uppercase());
        self.raw_values_where(move |n| {
            if lower {
                n == name.as_bytes()
            } else {
                n.eq_ignore_ascii_case(name.as_bytes())
            }
        })
        .filter_map(|v| std::str::from_utf8(v).ok())
    }

    /// The values, as received (not checked to be UTF-8), of the headers whose stored
    /// (lowercase) name `matches`.
    pub(crate) fn raw_values_where<'s, F: Fn(&[u8]) -> bool>(
        &'s self,
        matches: F,
    ) -> impl Iterator<Item = &'s [u8]> + use<'s, F> {
        self.spans()
            .filter(move |&(start, name_end, _)| {
                self.bytes.get(start..name_end).is_some_and(&matches)
            })
            .map(|(_, name_end, value_end)| self.bytes.get(name_end..value_end).unwrap_or_default())
    }

    /// Every header as (lowercase name, value), in the order received (a value that is not
    /// UTF-8 is skipped).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.spans().filter_map(|(start, name_end, value_end)| {
            let name = std::str::from_utf8(self.bytes.get(start..name_end)?).ok()?;
            let value = std::str::from_utf8(self.bytes.get(name_end..value_end)?).ok()?;
            Some((name, value))
        })
    }

    /// Where each header's name starts, where it ends (its value starts) and where its value
    /// ends.
    fn spans(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&(name_end, value_end)| {
            let span = (start, name_end, value_end);
            start = value_end;
            span
        })
    }

    /// The number of headers (those whose value is not UTF-8 included).
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

/// Which end of a call code runs on: hooks see it in
/// [`RequestContext::side`](crate::extension::RequestContext::side).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Side {
    /// In the agent's server, on a request it received.
    #[default]
    Server,
    /// In a client, on a request it is about to send (only extensions that opt in with
    /// [`ExtensionHooks::RUNS_IN_CLIENT`](crate::extension::ExtensionHooks::RUNS_IN_CLIENT)).
    Client,
}

#[cfg(test)]
mod tests {
    use super::RequestHeaders;

    #[test]
    fn values_that_are_not_utf8_are_kept_but_never_returned() {
        let mut h = RequestHeaders::new();
        h.push("X-Mixed", "first");
        // Latin-1 obs-text: not UTF-8.
        h.push_received("x-mixed", b"caf\xe9");
        // The same word as UTF-8 is returned as sent.
        h.push_received("x-mixed", "café".as_bytes());
        h.push_received("a2a-version", b"1.0");
        assert_eq!(h.len(), 4);
        assert_eq!(h.get_all("x-mixed").collect::<Vec<_>>(), ["first", "café"]);
        assert_eq!(h.get("X-MIXED"), Some("first"), "names ignore case");
        assert_eq!(h.get("a2a-version"), Some("1.0"));
        assert_eq!(
            h.iter().collect::<Vec<_>>(),
            [
                ("x-mixed", "first"),
                ("x-mixed", "café"),
                ("a2a-version", "1.0")
            ]
        );
        // The raw values are all there, in order.
        assert_eq!(
            h.raw_values_where(|n| n == b"x-mixed").collect::<Vec<_>>(),
            [&b"first"[..], b"caf\xe9", "café".as_bytes()]
        );
    }
}
