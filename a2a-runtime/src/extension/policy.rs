//! [`ActivationPolicy`]: which callers may activate an extension, set by the operator on the
//! server builder and checked on every request before the extension's own `activate`.

use super::RequestContext;

/// Which callers may activate one extension: deny rules, then allow rules, checked on every
/// request that asks for the extension, before its [`activate`](super::ExtensionHooks::activate).
///
/// A caller matched by a deny rule is refused; otherwise, when there are allow rules, a caller
/// none of them matches is refused; a policy without allow rules admits everyone not denied.
/// A refused optional extension is skipped (not active, not echoed: the request goes on without
/// it); a refused required extension refuses the request with PermissionDenied (HTTP 403). Each
/// refusal is counted in [`ExtensionMetrics::denials`](super::ExtensionMetrics::denials).
///
/// Set with [`A2aServerBuilder::activation_policy`](crate::server::A2aServerBuilder::activation_policy);
/// an extension without a policy costs nothing extra per request.
///
/// ```
/// use a2a_runtime::extension::{ActivationPolicy, Caller};
///
/// // Tenant t1, or anyone holding the `geo:read` scope; never the principal `mallory`.
/// let policy = ActivationPolicy::new()
///     .allow(Caller::Tenant("t1".into()))
///     .allow(Caller::Role("geo:read".into()))
///     .deny(Caller::Principal("mallory".into()));
/// # let _ = policy;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActivationPolicy {
    allow: Vec<Caller>,
    deny: Vec<Caller>,
}

/// A kind of caller named by an [`ActivationPolicy`] rule.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Caller {
    /// Requests in this tenant.
    Tenant(String),
    /// The principal with this id (as the authenticator names it).
    Principal(String),
    /// Principals with this role or scope (a JWT's `scope`, `scp` or `roles`, a static
    /// token's roles).
    Role(String),
    /// Principals whose credential has this claim with this value: a string claim equal to it,
    /// or an array claim holding it.
    Claim {
        /// The claim's name.
        name: String,
        /// The value.
        value: String,
    },
    /// Every authenticated principal.
    Authenticated,
}

impl Caller {
    /// True when the caller of `ctx` is of this kind.
    pub fn matches(&self, ctx: &RequestContext) -> bool {
        let principal = &ctx.principal;
        match self {
            Self::Tenant(tenant) => ctx.tenant == *tenant,
            Self::Principal(id) => principal.authenticated && principal.id() == id,
            Self::Role(role) => principal.roles.iter().any(|r| r == role),
            Self::Claim { name, value } => {
                let claim = principal.claims.as_ref().and_then(|c| c.get(name));
                match claim {
                    Some(serde_json::Value::String(s)) => s == value,
                    Some(serde_json::Value::Array(items)) => {
                        items.iter().any(|i| i.as_str() == Some(value))
                    }
                    _ => false,
                }
            }
            Self::Authenticated => principal.authenticated,
        }
    }
}

impl ActivationPolicy {
    /// A policy admitting everyone (until rules are added).
    pub fn new() -> Self {
        Self::default()
    }

    /// Admits callers of this kind (once there is an allow rule, only callers some allow rule
    /// matches are admitted).
    pub fn allow(mut self, caller: Caller) -> Self {
        self.allow.push(caller);
        self
    }

    /// Refuses callers of this kind, whatever the allow rules say.
    pub fn deny(mut self, caller: Caller) -> Self {
        self.deny.push(caller);
        self
    }

    /// True when the caller of `ctx` may activate the extension.
    pub fn admits(&self, ctx: &RequestContext) -> bool {
        !self.deny.iter().any(|c| c.matches(ctx))
            && (self.allow.is_empty() || self.allow.iter().any(|c| c.matches(ctx)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Principal;

    fn ctx(tenant: &str, principal: Principal) -> RequestContext {
        RequestContext {
            tenant: tenant.into(),
            principal,
            ..RequestContext::v1()
        }
    }

    #[test]
    fn deny_rules_win_and_allow_rules_narrow() {
        let mut alice = Principal::authenticated("alice");
        alice.roles = vec!["geo:read".into()];
        let mut claims = serde_json::Map::new();
        claims.insert("groups".into(), serde_json::json!(["ops", "dev"]));
        claims.insert("plan".into(), serde_json::json!("gold"));
        let mut bob = Principal::authenticated("bob");
        bob.claims = Some(std::sync::Arc::new(claims));
        let open = ActivationPolicy::new();
        assert!(open.admits(&ctx("", Principal::anonymous())));
        let policy = ActivationPolicy::new()
            .allow(Caller::Tenant("t1".into()))
            .allow(Caller::Role("geo:read".into()))
            .allow(Caller::Claim {
                name: "groups".into(),
                value: "ops".into(),
            })
            .deny(Caller::Principal("mallory".into()));
        assert!(policy.admits(&ctx("t1", Principal::anonymous())));
        assert!(!policy.admits(&ctx("t2", Principal::anonymous())));
        assert!(policy.admits(&ctx("t2", alice.clone())));
        assert!(policy.admits(&ctx("t2", bob.clone())));
        assert!(!policy.admits(&ctx("t1", Principal::authenticated("mallory"))));
        let gold = ActivationPolicy::new().allow(Caller::Claim {
            name: "plan".into(),
            value: "gold".into(),
        });
        assert!(gold.admits(&ctx("", bob)));
        assert!(!gold.admits(&ctx("", alice)));
        // An anonymous caller is no principal named `anonymous`.
        let named = ActivationPolicy::new().allow(Caller::Principal("anonymous".into()));
        assert!(!named.admits(&ctx("", Principal::anonymous())));
        let authenticated = ActivationPolicy::new().allow(Caller::Authenticated);
        assert!(!authenticated.admits(&ctx("t1", Principal::anonymous())));
    }
}
