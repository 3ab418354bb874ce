//! The A2A v1.0 wire model (proto package `lf.a2a.v1`), with ProtoJSON serialization.
//!
//! Every message of the data model is here, once: the core and every binding use these types.
//! Serialization is strict (see [`crate::json`] for the rules), deserialization is lenient, and
//! REQUIRED fields are checked separately by [`Validate`] so that a missing field is reported as
//! an invalid-params error naming the field path, not as a parse error.

mod agent_card;
mod ai_catalog;
mod common;
#[cfg(feature = "server")]
pub(crate) use common::unix_millis;
mod events;
mod message;
mod push;
mod requests;
mod security;
mod task;

pub use agent_card::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ProtocolBinding,
};
pub use ai_catalog::{
    A2A_AGENT_CARD_TYPE, AI_CATALOG_MEDIA_TYPE, AI_CATALOG_PATH, AI_CATALOG_SPEC_VERSION,
    AiCatalog, CatalogEntry, CatalogHost,
};
pub use common::{
    ArtifactId, ContextId, MessageId, Metadata, PushConfigId, TaskId, Timestamp, TimestampError,
    Validate, Violations,
};
pub use events::{
    SendMessageResponse, StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent,
};
pub use message::{Message, Part, PartContent, Role};
pub use push::{
    AuthenticationInfo, ListTaskPushNotificationConfigsResponse, TaskPushNotificationConfig,
};
pub use requests::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, Empty, GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, ListTasksResponse, PAGE_SIZE_RANGE, SendMessageConfiguration,
    SendMessageRequest, SubscribeToTaskRequest,
};
pub use security::{
    ApiKeySecurityScheme, AuthorizationCodeOAuthFlow, ClientCredentialsOAuthFlow,
    DeviceCodeOAuthFlow, HttpAuthSecurityScheme, ImplicitOAuthFlow, MutualTlsSecurityScheme,
    OAuth2SecurityScheme, OAuthFlows, OpenIdConnectSecurityScheme, PasswordOAuthFlow,
    SecurityRequirement, SecurityScheme, StringList,
};
pub use task::{Artifact, Task, TaskState, TaskStatus};

/// Defines ProtoJSON (de)serialization for a proto enum: emitted as its full name, accepted as
/// the name or its number.
macro_rules! proto_enum {
    ($ty:ident, $what:literal, { $($variant:ident = $num:literal => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in proto order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// The proto name, e.g. `TASK_STATE_WORKING`.
            pub const fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $name),+ }
            }

            /// The proto number.
            pub const fn number(self) -> i32 {
                match self { $($ty::$variant => $num),+ }
            }

            /// The value with this proto number.
            pub fn from_number(n: i64) -> Option<Self> {
                match n { $($num => Some($ty::$variant),)+ _ => None }
            }

            /// The value with this proto name (exact match).
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($name => Some($ty::$variant),)+ _ => None }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                Self::from_name(s)
                    .or_else(|| s.parse::<i64>().ok().and_then(Self::from_number))
                    .ok_or_else(|| format!(concat!("unknown ", $what, " {:?}"), s))
            }
        }

        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> ::serde::de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a ", $what, " name or number"))
                    }
                    fn visit_str<E: ::serde::de::Error>(self, v: &str) -> Result<$ty, E> {
                        // `UNRECOGNIZED` is the protobuf-ts sentinel the official JS SDK sends
                        // for an enum field the caller left unset: read it as unset.
                        if v == "UNRECOGNIZED" {
                            if let Some(unset) = $ty::from_number(0) {
                                return Ok(unset);
                            }
                        }
                        $ty::from_name(v).ok_or_else(|| {
                            E::custom(format!(
                                concat!("unknown ", $what, " {:?}, expected one of {}"),
                                v,
                                $ty::ALL.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", ")
                            ))
                        })
                    }
                    fn visit_i64<E: ::serde::de::Error>(self, v: i64) -> Result<$ty, E> {
                        $ty::from_number(v).ok_or_else(|| {
                            E::custom(format!(concat!("unknown ", $what, " number {}"), v))
                        })
                    }
                    fn visit_u64<E: ::serde::de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}
pub(crate) use proto_enum;

/// Defines lenient deserialization for a proto message that is a single `oneof` (the member name
/// is the discriminator): unknown members are ignored, `null` members are unset, and zero or
/// several set members are an error.
macro_rules! oneof_wrapper {
    ($ty:ident, $what:literal, { $($name:literal $(| $alias:literal)? => $variant:ident($inner:ty)),+ $(,)? }) => {
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> ::serde::de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a ", $what, " object with exactly one of: ", $($name, " "),+))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, mut map: A) -> Result<$ty, A::Error> {
                        let mut found: Option<$ty> = None;
                        const FIELDS: &[&str] = &[$($name $(, $alias)?),+];
                        while let Some(key) = map.next_key_seed($crate::json::KeyIn(FIELDS))? {
                            match key.unwrap_or_default() {
                                $(
                                    $name $(| $alias)? => {
                                        if let Some(v) = map.next_value::<Option<$inner>>()? {
                                            if found.is_some() {
                                                return Err(::serde::de::Error::custom(concat!(
                                                    $what, " must have exactly one member"
                                                )));
                                            }
                                            found = Some($ty::$variant(v));
                                        }
                                    }
                                )+
                                _ => {
                                    map.next_value::<::serde::de::IgnoredAny>()?;
                                }
                            }
                        }
                        found.ok_or_else(|| ::serde::de::Error::custom(concat!(
                            $what, " must have exactly one of: ", $($name, " "),+
                        )))
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}
pub(crate) use oneof_wrapper;
