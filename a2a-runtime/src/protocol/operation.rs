//! The operations as data: [`Operation`] names them, [`A2aRequest`] carries their typed params
//! (the results are [`A2aResponse`](crate::core::A2aResponse)). Bindings map their routes and
//! method names onto these; extension hooks see and may change them.

use std::fmt;

use serde_json::Value;

use crate::error::A2aError;
use crate::json;
use crate::types::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, SendMessageRequest, SubscribeToTaskRequest, TaskPushNotificationConfig,
    Validate, Violations,
};

macro_rules! operations {
    ($($variant:ident => $method:literal, $req:ty;)+) => {
        /// One of the eleven A2A operations.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Operation {
            $(
                #[doc = concat!("`", $method, "`")]
                $variant,
            )+
        }

        impl Operation {
            /// Every operation.
            pub const ALL: &'static [Operation] = &[$(Operation::$variant),+];

            /// The JSON-RPC method name (v1.0).
            pub const fn method(self) -> &'static str {
                match self { $(Operation::$variant => $method),+ }
            }

            /// The operation with this JSON-RPC method name.
            pub fn from_method(method: &str) -> Option<Self> {
                match method { $($method => Some(Operation::$variant),)+ _ => None }
            }
        }

        /// A typed request of one operation.
        #[derive(Clone, Debug, PartialEq)]
        pub enum A2aRequest {
            $(
                #[doc = concat!("`", $method, "`")]
                $variant($req),
            )+
        }

        impl A2aRequest {
            /// The operation.
            pub fn operation(&self) -> Operation {
                match self { $(A2aRequest::$variant(_) => Operation::$variant),+ }
            }

            /// The message of a SendMessage / SendStreamingMessage request.
            pub fn message(&mut self) -> Option<&mut crate::types::Message> {
                match self {
                    A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) => Some(&mut r.message),
                    _ => None,
                }
            }

            /// Decodes the params of `op` from a JSON value (`null` or absent means `{}`).
            pub fn from_params(op: Operation, params: Value) -> Result<Self, A2aError> {
                let params = if params.is_null() { Value::Object(Default::default()) } else { params };
                Ok(match op { $(Operation::$variant => A2aRequest::$variant(json::from_value(params)?)),+ })
            }

            /// Decodes the params of `op` from raw JSON text (already depth-checked).
            pub fn from_raw(op: Operation, raw: &str) -> Result<Self, A2aError> {
                let raw = if raw.trim() == "null" { "{}" } else { raw };
                Ok(match op { $(Operation::$variant => A2aRequest::$variant(json::from_raw(raw)?)),+ })
            }

            /// The request as its ProtoJSON object (the JSON-RPC `params`, the REST body).
            pub fn to_params(&self) -> Result<Value, serde_json::Error> {
                match self { $(A2aRequest::$variant(r) => serde_json::to_value(r)),+ }
            }

            /// The `tenant` field of the request.
            pub fn tenant(&self) -> &str {
                match self { $(A2aRequest::$variant(r) => &r.tenant),+ }
            }

            /// Sets the `tenant` field (a REST path tenant takes precedence over the body's).
            pub fn set_tenant(&mut self, tenant: &str) {
                match self { $(A2aRequest::$variant(r) => { r.tenant.clear(); r.tenant.push_str(tenant) }),+ }
            }
        }

        impl Validate for A2aRequest {
            fn check(&self, v: &mut Violations) {
                match self { $(A2aRequest::$variant(r) => r.check(v)),+ }
            }
        }
    };
}

operations! {
    SendMessage => "SendMessage", SendMessageRequest;
    SendStreamingMessage => "SendStreamingMessage", SendMessageRequest;
    GetTask => "GetTask", GetTaskRequest;
    ListTasks => "ListTasks", ListTasksRequest;
    CancelTask => "CancelTask", CancelTaskRequest;
    SubscribeToTask => "SubscribeToTask", SubscribeToTaskRequest;
    CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig", TaskPushNotificationConfig;
    GetTaskPushNotificationConfig => "GetTaskPushNotificationConfig", GetTaskPushNotificationConfigRequest;
    ListTaskPushNotificationConfigs => "ListTaskPushNotificationConfigs", ListTaskPushNotificationConfigsRequest;
    DeleteTaskPushNotificationConfig => "DeleteTaskPushNotificationConfig", DeleteTaskPushNotificationConfigRequest;
    GetExtendedAgentCard => "GetExtendedAgentCard", GetExtendedAgentCardRequest;
}

impl Operation {
    /// True for the operations answered with a stream of events.
    pub const fn is_streaming(self) -> bool {
        matches!(
            self,
            Operation::SendStreamingMessage | Operation::SubscribeToTask
        )
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method())
    }
}
