//! [`Scope`]: who owns a record — the tenant of the request and its authenticated principal.

use std::fmt;

/// Who owns a record: the tenant of the request and the authenticated principal.
#[derive(Clone, PartialOrd, Ord)]
pub struct Scope {
    pub(crate) tenant: String,
    // Borrowed for the anonymous principal (no allocation per request).
    pub(crate) owner: std::borrow::Cow<'static, str>,
    // `tenant` and `owner` hashed once, when the scope is made (with this process's random
    // seed): every store and live-task look-up hashes a scope (a SendMessage on a full
    // in-memory store four times). Last, so that the derived order is the fields' order.
    hash: u64,
}

/// The seed of [`Scope`]'s hash, random per process (tenants come from request paths).
static SCOPE_SEED: std::sync::OnceLock<crate::FastHash> = std::sync::OnceLock::new();

impl PartialEq for Scope {
    // Field by field, as derived, except that an empty field is compared by its length alone:
    // comparing two empty strings calls `memcmp` on their dangling pointers, and where that
    // `memcmp` reads through a mask (AVX-512 builds of glibc) the CPU may take a slow assist
    // to suppress the fault of the masked-off read; every store and live-task lookup compares
    // a scope, whose tenant is usually empty.
    fn eq(&self, other: &Self) -> bool {
        fn same(a: &str, b: &str) -> bool {
            a.len() == b.len() && (a.is_empty() || a == b)
        }
        self.hash == other.hash
            && same(&self.tenant, &other.tenant)
            && same(&self.owner, &other.owner)
    }
}

impl Eq for Scope {}

impl std::hash::Hash for Scope {
    /// The hash of the fields, made once (consistent with the equality above).
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("tenant", &self.tenant)
            .field("owner", &self.owner)
            .finish()
    }
}

impl Default for Scope {
    fn default() -> Self {
        Self::of(String::new(), std::borrow::Cow::Borrowed(""))
    }
}

impl Scope {
    /// A scope for `tenant` and `owner`.
    pub fn new(tenant: impl Into<String>, owner: impl Into<String>) -> Self {
        Self::of(tenant.into(), std::borrow::Cow::Owned(owner.into()))
    }

    /// A scope of these fields, hashed.
    pub(crate) fn of(tenant: String, owner: std::borrow::Cow<'static, str>) -> Self {
        use std::hash::BuildHasher as _;
        let hash = SCOPE_SEED
            .get_or_init(crate::FastHash::default)
            .hash_one((tenant.as_str(), &*owner));
        Self {
            tenant,
            owner,
            hash,
        }
    }

    /// The tenant (empty when the interface has none).
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// The owner: the id of the principal that created the record.
    pub fn owner(&self) -> &str {
        &self.owner
    }
}
