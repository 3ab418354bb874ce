//! Conversion between the protobuf messages of [`super::pb`] and the wire model of
//! [`crate::types`], both ways, with `From`.
//!
//! Every field is carried over: what the JSON bindings carry, the gRPC binding carries. The only
//! values protobuf cannot hold are JSON numbers outside the exact range of a double (as on every
//! ProtoJSON binding) and a part with conflicting content members (which validation rejects
//! anyway; it becomes its first member). Integral doubles within ±2^53 come back as integers, so
//! metadata written by this crate round-trips unchanged.
//!
//! ```
//! use a2a_runtime::grpc::pb;
//! use a2a_runtime::types::Message;
//!
//! let message = Message::user_text("hello");
//! let wire = pb::Message::from(message.clone());
//! assert_eq!(wire.role, pb::Role::User as i32);
//! assert_eq!(Message::from(wire), message);
//! ```

use std::collections::BTreeMap;

use prost_types::value::Kind;
use serde_json::{Map, Number, Value};

use super::pb;
use crate::json::Base64Bytes;
use crate::types::{
    self, ArtifactId, ContextId, MessageId, Metadata, PartContent, ProtocolBinding, PushConfigId,
    Role, TaskId, TaskState, Timestamp,
};

/// A field-level conversion (the field types of both sides differ only in representation).
trait Conv<T> {
    fn conv(self) -> T;
}

macro_rules! same {
    ($($t:ty),*) => {$(
        impl Conv<$t> for $t {
            fn conv(self) -> $t {
                self
            }
        }
    )*};
}
same!(String, bool, i32);

impl<A: Conv<B>, B> Conv<Vec<B>> for Vec<A> {
    fn conv(self) -> Vec<B> {
        self.into_iter().map(Conv::conv).collect()
    }
}

impl<A: Conv<B>, B> Conv<Option<B>> for Option<A> {
    fn conv(self) -> Option<B> {
        self.map(Conv::conv)
    }
}

impl<A: Conv<B>, B> Conv<BTreeMap<String, B>> for BTreeMap<String, A> {
    fn conv(self) -> BTreeMap<String, B> {
        self.into_iter().map(|(k, v)| (k, v.conv())).collect()
    }
}

macro_rules! ids {
    ($($id:ty),*) => {$(
        impl Conv<String> for $id {
            fn conv(self) -> String {
                self.into()
            }
        }
        impl Conv<$id> for String {
            fn conv(self) -> $id {
                self.into()
            }
        }
    )*};
}
ids!(TaskId, ContextId, MessageId, ArtifactId, PushConfigId);

impl Conv<ProtocolBinding> for String {
    fn conv(self) -> ProtocolBinding {
        ProtocolBinding::from(self.as_str())
    }
}

impl Conv<String> for ProtocolBinding {
    fn conv(self) -> String {
        match self {
            ProtocolBinding::Other(s) => s,
            known => known.as_str().to_owned(),
        }
    }
}

impl Conv<i32> for TaskState {
    fn conv(self) -> i32 {
        self.number()
    }
}

impl Conv<TaskState> for i32 {
    fn conv(self) -> TaskState {
        TaskState::from_number(i64::from(self)).unwrap_or_default()
    }
}

impl Conv<i32> for Role {
    fn conv(self) -> i32 {
        self.number()
    }
}

impl Conv<Role> for i32 {
    fn conv(self) -> Role {
        Role::from_number(i64::from(self)).unwrap_or_default()
    }
}

impl Conv<Option<prost_types::Struct>> for Metadata {
    fn conv(self) -> Option<prost_types::Struct> {
        (!self.is_empty()).then(|| to_struct(self.0))
    }
}

impl Conv<Metadata> for Option<prost_types::Struct> {
    fn conv(self) -> Metadata {
        self.map(|s| Metadata(from_struct(s))).unwrap_or_default()
    }
}

impl Conv<prost_types::Timestamp> for Timestamp {
    fn conv(self) -> prost_types::Timestamp {
        prost_types::Timestamp {
            seconds: self.0.timestamp(),
            nanos: i32::try_from(self.0.timestamp_subsec_nanos()).unwrap_or(0),
        }
    }
}

impl Conv<Timestamp> for prost_types::Timestamp {
    fn conv(self) -> Timestamp {
        let nanos = u32::try_from(self.nanos.clamp(0, 999_999_999)).unwrap_or(0);
        Timestamp(chrono::DateTime::from_timestamp(self.seconds, nanos).unwrap_or_default())
    }
}

/// A JSON object as a `google.protobuf.Struct`.
pub(crate) fn to_struct(map: Map<String, Value>) -> prost_types::Struct {
    prost_types::Struct {
        fields: map.into_iter().map(|(k, v)| (k, to_value(v))).collect(),
    }
}

/// A `google.protobuf.Struct` as a JSON object.
pub(crate) fn from_struct(s: prost_types::Struct) -> Map<String, Value> {
    s.fields
        .into_iter()
        .map(|(k, v)| (k, from_value(v)))
        .collect()
}

/// A JSON value as a `google.protobuf.Value`.
pub(crate) fn to_value(v: Value) -> prost_types::Value {
    let kind = match v {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => Kind::StringValue(s),
        Value::Array(a) => Kind::ListValue(prost_types::ListValue {
            values: a.into_iter().map(to_value).collect(),
        }),
        Value::Object(m) => Kind::StructValue(to_struct(m)),
    };
    prost_types::Value { kind: Some(kind) }
}

/// The largest integer a double holds exactly.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// A `google.protobuf.Value` as JSON (integral numbers within ±2^53 as integers; NaN and the
/// infinities, which JSON cannot hold, as null).
pub(crate) fn from_value(v: prost_types::Value) -> Value {
    match v.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(b),
        Some(Kind::NumberValue(n)) => {
            if n.fract() == 0.0 && n.abs() <= EXACT {
                // In range and integral: the cast is exact.
                #[allow(clippy::cast_possible_truncation)]
                Value::Number(Number::from(n as i64))
            } else {
                Number::from_f64(n).map_or(Value::Null, Value::Number)
            }
        }
        Some(Kind::StringValue(s)) => Value::String(s),
        Some(Kind::ListValue(l)) => Value::Array(l.values.into_iter().map(from_value).collect()),
        Some(Kind::StructValue(s)) => Value::Object(from_struct(s)),
    }
}

/// `From` both ways for messages whose fields correspond one to one.
macro_rules! message {
    ($pb:ident => $ours:ident { $($f:ident),* $(,)? }) => {
        impl From<pb::$pb> for types::$ours {
            fn from(m: pb::$pb) -> Self {
                Self { $($f: m.$f.conv()),* }
            }
        }
        impl From<types::$ours> for pb::$pb {
            fn from(m: types::$ours) -> Self {
                Self { $($f: m.$f.conv()),* }
            }
        }
        impl Conv<types::$ours> for pb::$pb {
            fn conv(self) -> types::$ours {
                self.into()
            }
        }
        impl Conv<pb::$pb> for types::$ours {
            fn conv(self) -> pb::$pb {
                self.into()
            }
        }
    };
}

/// A message field that our model always has (REQUIRED in the proto): absent reads as default.
macro_rules! required {
    ($($pb:ident => $ours:ident),*) => {$(
        impl Conv<types::$ours> for Option<pb::$pb> {
            fn conv(self) -> types::$ours {
                self.map(Into::into).unwrap_or_default()
            }
        }
        impl Conv<Option<pb::$pb>> for types::$ours {
            fn conv(self) -> Option<pb::$pb> {
                Some(self.into())
            }
        }
    )*};
}

message!(Task => Task { id, context_id, status, artifacts, history, metadata });
message!(TaskStatus => TaskStatus { state, message, timestamp });
message!(Message => Message {
    message_id, context_id, task_id, role, parts, metadata, extensions, reference_task_ids
});
message!(Artifact => Artifact { artifact_id, name, description, parts, metadata, extensions });
message!(TaskStatusUpdateEvent => TaskStatusUpdateEvent { task_id, context_id, status, metadata });
message!(TaskArtifactUpdateEvent => TaskArtifactUpdateEvent {
    task_id, context_id, artifact, append, last_chunk, metadata
});
message!(AuthenticationInfo => AuthenticationInfo { scheme, credentials });
message!(TaskPushNotificationConfig => TaskPushNotificationConfig {
    tenant, id, task_id, url, token, authentication
});
message!(AgentInterface => AgentInterface { url, protocol_binding, tenant, protocol_version });
message!(AgentCard => AgentCard {
    name, description, supported_interfaces, provider, version, documentation_url, capabilities,
    security_schemes, security_requirements, default_input_modes, default_output_modes, skills,
    signatures, icon_url
});
message!(AgentProvider => AgentProvider { url, organization });
message!(AgentCapabilities => AgentCapabilities {
    streaming, push_notifications, extensions, extended_agent_card
});
message!(AgentExtension => AgentExtension { uri, description, required, params });
message!(AgentSkill => AgentSkill {
    id, name, description, tags, examples, input_modes, output_modes, security_requirements
});
message!(AgentCardSignature => AgentCardSignature { protected, signature, header });
message!(StringList => StringList { list });
message!(SecurityRequirement => SecurityRequirement { schemes });
message!(ApiKeySecurityScheme => ApiKeySecurityScheme { description, location, name });
message!(HttpAuthSecurityScheme => HttpAuthSecurityScheme { description, scheme, bearer_format });
message!(OAuth2SecurityScheme => OAuth2SecurityScheme { description, flows, oauth2_metadata_url });
message!(OpenIdConnectSecurityScheme => OpenIdConnectSecurityScheme {
    description, open_id_connect_url
});
message!(MutualTlsSecurityScheme => MutualTlsSecurityScheme { description });
message!(AuthorizationCodeOAuthFlow => AuthorizationCodeOAuthFlow {
    authorization_url, token_url, refresh_url, scopes, pkce_required
});
message!(ClientCredentialsOAuthFlow => ClientCredentialsOAuthFlow {
    token_url, refresh_url, scopes
});
message!(ImplicitOAuthFlow => ImplicitOAuthFlow { authorization_url, refresh_url, scopes });
message!(PasswordOAuthFlow => PasswordOAuthFlow { token_url, refresh_url, scopes });
message!(DeviceCodeOAuthFlow => DeviceCodeOAuthFlow {
    device_authorization_url, token_url, refresh_url, scopes
});
message!(SendMessageConfiguration => SendMessageConfiguration {
    accepted_output_modes, task_push_notification_config, history_length, return_immediately
});
message!(SendMessageRequest => SendMessageRequest { tenant, message, configuration, metadata });
message!(GetTaskRequest => GetTaskRequest { tenant, id, history_length });
message!(ListTasksRequest => ListTasksRequest {
    tenant, context_id, status, page_size, page_token, history_length, status_timestamp_after,
    include_artifacts
});
message!(ListTasksResponse => ListTasksResponse { tasks, next_page_token, page_size, total_size });
message!(CancelTaskRequest => CancelTaskRequest { tenant, id, metadata });
message!(SubscribeToTaskRequest => SubscribeToTaskRequest { tenant, id });
message!(GetTaskPushNotificationConfigRequest => GetTaskPushNotificationConfigRequest {
    tenant, task_id, id
});
message!(DeleteTaskPushNotificationConfigRequest => DeleteTaskPushNotificationConfigRequest {
    tenant, task_id, id
});
message!(ListTaskPushNotificationConfigsRequest => ListTaskPushNotificationConfigsRequest {
    tenant, task_id, page_size, page_token
});
message!(ListTaskPushNotificationConfigsResponse => ListTaskPushNotificationConfigsResponse {
    configs, next_page_token
});
message!(GetExtendedAgentCardRequest => GetExtendedAgentCardRequest { tenant });

required!(
    TaskStatus => TaskStatus,
    Message => Message,
    Artifact => Artifact,
    AgentCapabilities => AgentCapabilities
);

impl From<pb::Part> for types::Part {
    fn from(p: pb::Part) -> Self {
        use pb::part::Content;
        Self {
            content: match p.content {
                Some(Content::Text(t)) => PartContent::Text(t),
                Some(Content::Raw(b)) => PartContent::Raw(Base64Bytes(b)),
                Some(Content::Url(u)) => PartContent::Url(u),
                Some(Content::Data(v)) => PartContent::Data(from_value(v)),
                None => PartContent::Missing,
            },
            metadata: p.metadata.conv(),
            filename: p.filename,
            media_type: p.media_type,
        }
    }
}

impl From<types::Part> for pb::Part {
    fn from(p: types::Part) -> Self {
        use pb::part::Content;
        Self {
            content: match p.content {
                PartContent::Text(t) => Some(Content::Text(t)),
                PartContent::Raw(b) => Some(Content::Raw(b.0)),
                PartContent::Url(u) => Some(Content::Url(u)),
                PartContent::Data(v) => Some(Content::Data(to_value(v))),
                PartContent::Missing | PartContent::Conflicting(_) => None,
            },
            metadata: p.metadata.conv(),
            filename: p.filename,
            media_type: p.media_type,
        }
    }
}

impl Conv<types::Part> for pb::Part {
    fn conv(self) -> types::Part {
        self.into()
    }
}

impl Conv<pb::Part> for types::Part {
    fn conv(self) -> pb::Part {
        self.into()
    }
}

/// A oneof message with no member set (e.g. a `StreamResponse` without a payload).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the {0} has no member of its oneof set")]
pub struct MissingMember(pub &'static str);

mod names {
    pub(super) use super::pb::o_auth_flows::Flow as OAuthFlow;
    pub(super) use super::pb::security_scheme::Scheme as SecuritySchemeKind;
    pub(super) use super::pb::send_message_response::Payload as SendPayload;
    pub(super) use super::pb::stream_response::Payload as StreamPayload;
}

impl TryFrom<pb::SendMessageResponse> for types::SendMessageResponse {
    type Error = MissingMember;
    fn try_from(m: pb::SendMessageResponse) -> Result<Self, MissingMember> {
        use names::SendPayload as P;
        match m.payload {
            Some(P::Task(t)) => Ok(Self::Task(t.into())),
            Some(P::Message(x)) => Ok(Self::Message(x.into())),
            None => Err(MissingMember("SendMessageResponse")),
        }
    }
}

impl From<types::SendMessageResponse> for pb::SendMessageResponse {
    fn from(m: types::SendMessageResponse) -> Self {
        use names::SendPayload as P;
        Self {
            payload: Some(match m {
                types::SendMessageResponse::Task(t) => P::Task(t.into()),
                types::SendMessageResponse::Message(x) => P::Message(x.into()),
            }),
        }
    }
}

impl TryFrom<pb::StreamResponse> for types::StreamResponse {
    type Error = MissingMember;
    fn try_from(m: pb::StreamResponse) -> Result<Self, MissingMember> {
        use names::StreamPayload as P;
        match m.payload {
            Some(P::Task(t)) => Ok(Self::Task(t.into())),
            Some(P::Message(x)) => Ok(Self::Message(x.into())),
            Some(P::StatusUpdate(x)) => Ok(Self::StatusUpdate(x.into())),
            Some(P::ArtifactUpdate(x)) => Ok(Self::ArtifactUpdate(x.into())),
            None => Err(MissingMember("StreamResponse")),
        }
    }
}

impl From<types::StreamResponse> for pb::StreamResponse {
    fn from(m: types::StreamResponse) -> Self {
        use names::StreamPayload as P;
        Self {
            payload: Some(match m {
                types::StreamResponse::Task(t) => P::Task(t.into()),
                types::StreamResponse::Message(x) => P::Message(x.into()),
                types::StreamResponse::StatusUpdate(x) => P::StatusUpdate(x.into()),
                types::StreamResponse::ArtifactUpdate(x) => P::ArtifactUpdate(x.into()),
            }),
        }
    }
}

// A scheme or flow without its member has no counterpart in our model: it reads as the empty
// member of the first kind (an API key scheme without a name; an authorization-code flow
// without URLs), which validation of the card then reports by field.
impl From<pb::SecurityScheme> for types::SecurityScheme {
    fn from(m: pb::SecurityScheme) -> Self {
        use names::SecuritySchemeKind as K;
        match m.scheme {
            Some(K::ApiKeySecurityScheme(x)) => Self::ApiKeySecurityScheme(x.into()),
            Some(K::HttpAuthSecurityScheme(x)) => Self::HttpAuthSecurityScheme(x.into()),
            Some(K::Oauth2SecurityScheme(x)) => Self::Oauth2SecurityScheme(x.into()),
            Some(K::OpenIdConnectSecurityScheme(x)) => Self::OpenIdConnectSecurityScheme(x.into()),
            Some(K::MtlsSecurityScheme(x)) => Self::MtlsSecurityScheme(x.into()),
            None => Self::ApiKeySecurityScheme(types::ApiKeySecurityScheme::default()),
        }
    }
}

impl From<types::SecurityScheme> for pb::SecurityScheme {
    fn from(m: types::SecurityScheme) -> Self {
        use names::SecuritySchemeKind as K;
        use types::SecurityScheme as S;
        Self {
            scheme: Some(match m {
                S::ApiKeySecurityScheme(x) => K::ApiKeySecurityScheme(x.into()),
                S::HttpAuthSecurityScheme(x) => K::HttpAuthSecurityScheme(x.into()),
                S::Oauth2SecurityScheme(x) => K::Oauth2SecurityScheme(x.into()),
                S::OpenIdConnectSecurityScheme(x) => K::OpenIdConnectSecurityScheme(x.into()),
                S::MtlsSecurityScheme(x) => K::MtlsSecurityScheme(x.into()),
            }),
        }
    }
}

impl From<pb::OAuthFlows> for types::OAuthFlows {
    #[allow(deprecated)]
    fn from(m: pb::OAuthFlows) -> Self {
        use names::OAuthFlow as F;
        match m.flow {
            Some(F::AuthorizationCode(x)) => Self::AuthorizationCode(x.into()),
            Some(F::ClientCredentials(x)) => Self::ClientCredentials(x.into()),
            Some(F::DeviceCode(x)) => Self::DeviceCode(x.into()),
            Some(F::Implicit(x)) => Self::Implicit(x.into()),
            Some(F::Password(x)) => Self::Password(x.into()),
            None => Self::AuthorizationCode(types::AuthorizationCodeOAuthFlow::default()),
        }
    }
}

impl From<types::OAuthFlows> for pb::OAuthFlows {
    #[allow(deprecated)]
    fn from(m: types::OAuthFlows) -> Self {
        use names::OAuthFlow as F;
        use types::OAuthFlows as O;
        Self {
            flow: Some(match m {
                O::AuthorizationCode(x) => F::AuthorizationCode(x.into()),
                O::ClientCredentials(x) => F::ClientCredentials(x.into()),
                O::DeviceCode(x) => F::DeviceCode(x.into()),
                O::Implicit(x) => F::Implicit(x.into()),
                O::Password(x) => F::Password(x.into()),
            }),
        }
    }
}

macro_rules! via_from {
    ($($pb:ident => $ours:ident),*) => {$(
        impl Conv<types::$ours> for pb::$pb {
            fn conv(self) -> types::$ours {
                self.into()
            }
        }
        impl Conv<pb::$pb> for types::$ours {
            fn conv(self) -> pb::$pb {
                self.into()
            }
        }
    )*};
}
via_from!(SecurityScheme => SecurityScheme, OAuthFlows => OAuthFlows);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use prost::Message as _;
    use serde_json::json;

    /// `value` through protobuf bytes and back.
    fn through_the_wire<T, P>(value: T) -> T
    where
        T: Into<P>,
        P: prost::Message + Default + Into<T>,
    {
        let bytes = value.into().encode_to_vec();
        P::decode(bytes.as_slice()).unwrap().into()
    }

    fn metadata() -> Metadata {
        serde_json::from_value(json!({
            "int": 42, "negative": -7, "big": 9_007_199_254_740_992_i64, "float": 1.5,
            "null": null, "yes": true, "text": "t", "list": [1, "two", [3.25], {"k": null}],
            "nested": {"deeper": {"deepest": [false]}}
        }))
        .unwrap()
    }

    fn task() -> types::Task {
        serde_json::from_value(json!({
            "id": "t-1", "contextId": "c-1",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "2026-03-20T09:12:44.123456789Z",
                "message": {"messageId": "m-2", "role": "ROLE_AGENT", "parts": [{"text": "name?"}],
                    "taskId": "t-1", "contextId": "c-1"}},
            "artifacts": [{"artifactId": "a-1", "name": "n", "description": "d",
                "parts": [
                    {"text": "", "metadata": {"x": 1}},
                    {"raw": "AAEC/w==", "filename": "f.bin", "mediaType": "application/octet-stream"},
                    {"url": "https://example.com/f.png", "mediaType": "image/png"},
                    {"data": {"a": [1, 2.5, null]}},
                    {"data": "just a string"}
                ],
                "metadata": {"m": "v"}, "extensions": ["https://e/v1"]}],
            "history": [{"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}],
                "extensions": ["https://e/v1"], "referenceTaskIds": ["t-0"], "metadata": {"k": [true]}}],
            "metadata": {"top": {"n": 3}}
        }))
        .unwrap()
    }

    fn card() -> types::AgentCard {
        let scopes = json!({"read": "Read", "write": "Write"});
        serde_json::from_value(json!({
            "name": "n", "description": "d", "version": "1.2.3",
            "supportedInterfaces": [
                {"url": "https://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "t"},
                {"url": "a:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
                {"url": "https://a/x", "protocolBinding": "https://example.com/binding", "protocolVersion": "1.0"}
            ],
            "provider": {"url": "https://p", "organization": "o"},
            "documentationUrl": "", "iconUrl": "https://i",
            "capabilities": {"streaming": false, "pushNotifications": true, "extendedAgentCard": true,
                "extensions": [{"uri": "https://e/v1", "description": "e", "required": true, "params": {"p": 1}}]},
            "securitySchemes": {
                "key": {"apiKeySecurityScheme": {"description": "k", "location": "header", "name": "X-Key"}},
                "http": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
                "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://o/.well-known"}},
                "mtls": {"mtlsSecurityScheme": {"description": "m"}},
                "code": {"oauth2SecurityScheme": {"oauth2MetadataUrl": "https://m", "flows": {"authorizationCode":
                    {"authorizationUrl": "https://a", "tokenUrl": "https://t", "refreshUrl": "https://r", "scopes": scopes, "pkceRequired": true}}}},
                "cc": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://t", "scopes": scopes}}}},
                "dc": {"oauth2SecurityScheme": {"flows": {"deviceCode": {"deviceAuthorizationUrl": "https://d", "tokenUrl": "https://t", "scopes": scopes}}}},
                "imp": {"oauth2SecurityScheme": {"flows": {"implicit": {"authorizationUrl": "https://a", "scopes": scopes}}}},
                "pw": {"oauth2SecurityScheme": {"flows": {"password": {"tokenUrl": "https://t", "scopes": scopes}}}}
            },
            "securityRequirements": [{"schemes": {"code": {"list": ["read"]}, "key": {"list": []}}}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["application/json"],
            "skills": [{"id": "s", "name": "S", "description": "D", "tags": ["t"], "examples": ["e"],
                "inputModes": ["text/plain"], "outputModes": ["text/plain"],
                "securityRequirements": [{"schemes": {"http": {"list": []}}}]}],
            "signatures": [{"protected": "p", "signature": "s", "header": {"kid": "k"}}]
        }))
        .unwrap()
    }

    #[test]
    fn tasks_messages_and_events_round_trip_through_protobuf() {
        let mut t = task();
        t.metadata = metadata();
        assert_eq!(through_the_wire::<_, pb::Task>(t.clone()), t);
        let events = [
            types::StreamResponse::Task(t.clone()),
            types::StreamResponse::Message(t.history[0].clone()),
            types::StreamResponse::StatusUpdate(types::TaskStatusUpdateEvent {
                task_id: t.id.clone(),
                context_id: t.context_id.clone(),
                status: t.status.clone(),
                metadata: metadata(),
            }),
            types::StreamResponse::ArtifactUpdate(types::TaskArtifactUpdateEvent {
                task_id: t.id.clone(),
                context_id: t.context_id.clone(),
                artifact: t.artifacts[0].clone(),
                append: true,
                last_chunk: true,
                metadata: Metadata::new(),
            }),
        ];
        for e in events {
            let bytes = pb::StreamResponse::from(e.clone()).encode_to_vec();
            let back = pb::StreamResponse::decode(bytes.as_slice()).unwrap();
            assert_eq!(types::StreamResponse::try_from(back).unwrap(), e);
        }
        let reply = types::SendMessageResponse::Message(t.history[0].clone());
        let back = pb::SendMessageResponse::from(reply.clone());
        assert_eq!(types::SendMessageResponse::try_from(back).unwrap(), reply);
        assert_eq!(
            types::StreamResponse::try_from(pb::StreamResponse::default()),
            Err(MissingMember("StreamResponse"))
        );
    }

    #[test]
    fn the_agent_card_round_trips_with_every_scheme_and_flow() {
        let c = card();
        assert_eq!(c.security_schemes.len(), 9);
        assert_eq!(through_the_wire::<_, pb::AgentCard>(c.clone()), c);
        // Presence of the optional fields survives (an empty documentationUrl is set).
        let wire = pb::AgentCard::from(c);
        assert_eq!(wire.documentation_url.as_deref(), Some(""));
        assert_eq!(wire.capabilities.unwrap().streaming, Some(false));
    }

    #[test]
    fn requests_round_trip_through_protobuf() {
        let send: types::SendMessageRequest = serde_json::from_value(json!({
            "tenant": "acme", "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]},
            "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 0, "returnImmediately": true,
                "taskPushNotificationConfig": {"url": "https://h", "token": "tok", "id": "p",
                    "authentication": {"scheme": "Bearer", "credentials": "c"}}},
            "metadata": {"k": 1}
        }))
        .unwrap();
        assert_eq!(
            through_the_wire::<_, pb::SendMessageRequest>(send.clone()),
            send
        );
        let list: types::ListTasksRequest = serde_json::from_value(json!({
            "tenant": "t", "contextId": "c", "status": "TASK_STATE_WORKING", "pageSize": 0, "pageToken": "p",
            "historyLength": 3, "statusTimestampAfter": "2026-01-01T00:00:00Z", "includeArtifacts": false
        }))
        .unwrap();
        assert_eq!(
            through_the_wire::<_, pb::ListTasksRequest>(list.clone()),
            list
        );
        let get = types::GetTaskRequest {
            tenant: "t".into(),
            id: "i".into(),
            history_length: Some(0),
        };
        assert_eq!(through_the_wire::<_, pb::GetTaskRequest>(get.clone()), get);
        let configs = types::ListTaskPushNotificationConfigsRequest {
            tenant: "t".into(),
            task_id: "i".into(),
            page_size: 5,
            page_token: "x".into(),
        };
        let wire = pb::ListTaskPushNotificationConfigsRequest::from(configs.clone());
        assert_eq!(wire.tenant, "t");
        assert_eq!(
            types::ListTaskPushNotificationConfigsRequest::from(wire),
            configs
        );
    }

    #[test]
    fn json_values_keep_integers_exact_within_the_double_range() {
        let m = metadata();
        let back = Metadata(from_struct(to_struct(m.0.clone())));
        assert_eq!(back, m);
        assert_eq!(back["big"], json!(9_007_199_254_740_992_i64));
        // NaN cannot be JSON: null.
        let nan = prost_types::Value {
            kind: Some(Kind::NumberValue(f64::NAN)),
        };
        assert_eq!(from_value(nan), Value::Null);
        // An unknown enum number reads as unspecified (validation then names the field).
        let msg = pb::Message {
            role: 99,
            ..Default::default()
        };
        assert_eq!(types::Message::from(msg).role, Role::Unspecified);
    }
}
