//! [`MtlsAuthenticator`]: the client certificate of a mutual-TLS connection as the principal.

use std::fmt;
use std::sync::Arc;

use x509_parser::prelude::{FromDer as _, GeneralName, X509Certificate};

use super::{AuthError, AuthRequest, Authenticator};
use crate::protocol::Principal;
use crate::types::{MutualTlsSecurityScheme, SecurityScheme};

/// Which name of the client certificate becomes the principal's id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CertIdentity {
    /// The subject's common name (CN), default.
    #[default]
    CommonName,
    /// The first DNS name among the subject alternative names.
    DnsName,
    /// The first URI among the subject alternative names (e.g. a SPIFFE ID).
    Uri,
    /// The first e-mail address (rfc822Name) among the subject alternative names.
    Email,
}

/// Turns a certificate's name into a principal, or refuses it.
type MapFn = dyn Fn(&str) -> Option<Principal> + Send + Sync;

/// Authenticates the client by the certificate it presented on a mutual-TLS connection,
/// declared on the card as the scheme `mtls` (an `mtlsSecurityScheme`).
///
/// The certificate has been verified by the TLS layer against the server's client CA
/// ([`TlsConfig::client_ca`](crate::server::TlsConfig::client_ca)); this authenticator maps
/// one of its names ([`CertIdentity`]) to the principal. A request without a client
/// certificate, or whose certificate lacks that name, is refused as Unauthenticated.
///
/// ```
/// use a2a_runtime::auth::{CertIdentity, MtlsAuthenticator};
/// use a2a_runtime::protocol::Principal;
/// let by_uri = MtlsAuthenticator::new()
///     .identity(CertIdentity::Uri)
///     .map(|uri| uri.strip_prefix("spiffe://acme/").map(Principal::authenticated));
/// # let _ = by_uri;
/// ```
#[derive(Clone)]
pub struct MtlsAuthenticator {
    identity: CertIdentity,
    scheme_name: String,
    map: Option<Arc<MapFn>>,
}

impl fmt::Debug for MtlsAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MtlsAuthenticator")
            .field("identity", &self.identity)
            .field("scheme_name", &self.scheme_name)
            .field("map", &self.map.is_some())
            .finish()
    }
}

impl Default for MtlsAuthenticator {
    fn default() -> Self {
        Self::new()
    }
}

impl MtlsAuthenticator {
    /// The subject's common name as the principal id, declared as the scheme `mtls`.
    pub fn new() -> Self {
        Self {
            identity: CertIdentity::CommonName,
            scheme_name: "mtls".into(),
            map: None,
        }
    }

    /// Which name of the certificate identifies the client.
    pub fn identity(mut self, identity: CertIdentity) -> Self {
        self.identity = identity;
        self
    }

    /// The name the scheme is declared under on the card.
    pub fn scheme_name(mut self, name: impl Into<String>) -> Self {
        self.scheme_name = name.into();
        self
    }

    /// Maps the certificate's name to the principal (with its tenants and roles); `None`
    /// refuses the client. Default: the name is the principal's id.
    pub fn map(mut self, map: impl Fn(&str) -> Option<Principal> + Send + Sync + 'static) -> Self {
        self.map = Some(Arc::new(map));
        self
    }

    /// The configured name of the certificate `der`.
    fn name_of(&self, der: &[u8]) -> Result<String, AuthError> {
        let (_, cert) = X509Certificate::from_der(der)
            .map_err(|e| AuthError::new(format!("the client certificate does not parse: {e}")))?;
        let name = match self.identity {
            CertIdentity::CommonName => cert
                .subject()
                .iter_common_name()
                .next()
                .and_then(|cn| cn.as_str().ok())
                .map(str::to_owned),
            kind => {
                let san = cert.subject_alternative_name().map_err(|e| {
                    AuthError::new(format!("the client certificate's SAN is invalid: {e}"))
                })?;
                san.and_then(|san| {
                    san.value
                        .general_names
                        .iter()
                        .find_map(|n| match (kind, n) {
                            (CertIdentity::DnsName, GeneralName::DNSName(s))
                            | (CertIdentity::Uri, GeneralName::URI(s))
                            | (CertIdentity::Email, GeneralName::RFC822Name(s)) => {
                                Some((*s).to_owned())
                            }
                            _ => None,
                        })
                })
            }
        };
        name.filter(|n| !n.is_empty()).ok_or_else(|| {
            AuthError::new(format!(
                "the client certificate has no {:?} to identify it",
                self.identity
            ))
        })
    }
}

#[async_trait::async_trait]
impl Authenticator for MtlsAuthenticator {
    async fn authenticate(&self, req: &AuthRequest<'_>) -> Result<Principal, AuthError> {
        let der = req
            .peer_certificate
            .ok_or_else(|| AuthError::new("no client certificate"))?;
        let name = self.name_of(der)?;
        match &self.map {
            None => Ok(Principal::authenticated(name)),
            Some(map) => map(&name).ok_or_else(|| {
                AuthError::new(format!("the client certificate {name:?} is not mapped"))
            }),
        }
    }

    fn security_schemes(&self) -> Vec<(String, SecurityScheme)> {
        vec![(
            self.scheme_name.clone(),
            SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme {
                description: "A client certificate issued by the agent's client CA.".into(),
            }),
        )]
    }

    fn challenge(&self) -> String {
        // No HTTP scheme carries a client certificate: the challenge names what is missing.
        "ClientCertificate realm=\"a2a\"".into()
    }
}
