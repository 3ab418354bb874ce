//! Security schemes and requirements of the agent card (OpenAPI 3.2 style).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::json::{is_false, lenient_bool, null_default};

/// A list of strings (`StringList`): the scopes of one scheme in a [`SecurityRequirement`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StringList {
    /// The values; `{}` on the wire when empty.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub list: Vec<String>,
}

/// One alternative way to satisfy security: every named scheme applies together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecurityRequirement {
    /// Scheme name (a key of `AgentCard.securitySchemes`) to required scopes.
    #[serde(default, deserialize_with = "null_default")]
    pub schemes: BTreeMap<String, StringList>,
}

/// A security scheme: exactly one of five kinds; the JSON member name is the discriminator.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SecurityScheme {
    /// `apiKeySecurityScheme`.
    ApiKeySecurityScheme(ApiKeySecurityScheme),
    /// `httpAuthSecurityScheme`.
    HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    /// `oauth2SecurityScheme`.
    Oauth2SecurityScheme(OAuth2SecurityScheme),
    /// `openIdConnectSecurityScheme`.
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    /// `mtlsSecurityScheme`.
    MtlsSecurityScheme(MutualTlsSecurityScheme),
}

super::oneof_wrapper!(SecurityScheme, "SecurityScheme", {
    "apiKeySecurityScheme" | "api_key_security_scheme" => ApiKeySecurityScheme(ApiKeySecurityScheme),
    "httpAuthSecurityScheme" | "http_auth_security_scheme" => HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    "oauth2SecurityScheme" | "oauth2_security_scheme" => Oauth2SecurityScheme(OAuth2SecurityScheme),
    "openIdConnectSecurityScheme" | "open_id_connect_security_scheme" => OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    "mtlsSecurityScheme" | "mtls_security_scheme" => MtlsSecurityScheme(MutualTlsSecurityScheme),
});

/// An API key sent in a header, query parameter or cookie.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeySecurityScheme {
    /// A description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// REQUIRED. `query`, `header` or `cookie`.
    #[serde(default, deserialize_with = "null_default")]
    pub location: String,
    /// REQUIRED. The header, parameter or cookie name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
}

/// HTTP authentication (RFC 7235), e.g. Bearer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// A description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// REQUIRED. The scheme name, e.g. `Bearer`.
    #[serde(default, deserialize_with = "null_default")]
    pub scheme: String,
    /// A hint of the bearer token format, e.g. `JWT`.
    #[serde(
        default,
        alias = "bearer_format",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub bearer_format: String,
}

/// OAuth 2.0.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    /// A description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// REQUIRED. The flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<OAuthFlows>,
    /// The RFC 8414 authorization server metadata URL.
    #[serde(
        default,
        alias = "oauth2_metadata_url",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub oauth2_metadata_url: String,
}

/// OpenID Connect.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// A description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// REQUIRED. The OpenID Connect discovery URL.
    #[serde(
        default,
        alias = "open_id_connect_url",
        deserialize_with = "null_default"
    )]
    pub open_id_connect_url: String,
}

/// Mutual TLS.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MutualTlsSecurityScheme {
    /// A description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
}

/// The OAuth 2.0 flow of a scheme: exactly one (`implicit` and `password` are deprecated and only
/// accepted for tolerance).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum OAuthFlows {
    /// `authorizationCode`.
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    /// `clientCredentials`.
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// `deviceCode`.
    DeviceCode(DeviceCodeOAuthFlow),
    /// `implicit` (deprecated).
    Implicit(ImplicitOAuthFlow),
    /// `password` (deprecated).
    Password(PasswordOAuthFlow),
}

super::oneof_wrapper!(OAuthFlows, "OAuthFlows", {
    "authorizationCode" | "authorization_code" => AuthorizationCode(AuthorizationCodeOAuthFlow),
    "clientCredentials" | "client_credentials" => ClientCredentials(ClientCredentialsOAuthFlow),
    "deviceCode" | "device_code" => DeviceCode(DeviceCodeOAuthFlow),
    "implicit" => Implicit(ImplicitOAuthFlow),
    "password" => Password(PasswordOAuthFlow),
});

/// The authorization-code flow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    /// REQUIRED.
    #[serde(
        default,
        alias = "authorization_url",
        deserialize_with = "null_default"
    )]
    pub authorization_url: String,
    /// REQUIRED.
    #[serde(default, alias = "token_url", deserialize_with = "null_default")]
    pub token_url: String,
    /// The refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// REQUIRED. Scope name to description.
    #[serde(default, deserialize_with = "null_default")]
    pub scopes: BTreeMap<String, String>,
    /// PKCE is required.
    #[serde(
        default,
        alias = "pkce_required",
        deserialize_with = "lenient_bool",
        skip_serializing_if = "is_false"
    )]
    pub pkce_required: bool,
}

/// The client-credentials flow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    /// REQUIRED.
    #[serde(default, alias = "token_url", deserialize_with = "null_default")]
    pub token_url: String,
    /// The refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// REQUIRED. Scope name to description.
    #[serde(default, deserialize_with = "null_default")]
    pub scopes: BTreeMap<String, String>,
}

/// The device-code flow (RFC 8628).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceCodeOAuthFlow {
    /// REQUIRED.
    #[serde(
        default,
        alias = "device_authorization_url",
        deserialize_with = "null_default"
    )]
    pub device_authorization_url: String,
    /// REQUIRED.
    #[serde(default, alias = "token_url", deserialize_with = "null_default")]
    pub token_url: String,
    /// The refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// REQUIRED. Scope name to description.
    #[serde(default, deserialize_with = "null_default")]
    pub scopes: BTreeMap<String, String>,
}

/// The implicit flow (deprecated).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// The authorization URL.
    #[serde(
        default,
        alias = "authorization_url",
        deserialize_with = "null_default"
    )]
    pub authorization_url: String,
    /// The refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Scope name to description.
    #[serde(default, deserialize_with = "null_default")]
    pub scopes: BTreeMap<String, String>,
}

/// The password flow (deprecated).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    /// The token URL.
    #[serde(default, alias = "token_url", deserialize_with = "null_default")]
    pub token_url: String,
    /// The refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub refresh_url: String,
    /// Scope name to description.
    #[serde(default, deserialize_with = "null_default")]
    pub scopes: BTreeMap<String, String>,
}
