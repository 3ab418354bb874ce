//! [`A2aError`] as a gRPC status and back: the table's status code, the message, and
//! `google.rpc.Status.details` in `grpc-status-details-bin` with an `ErrorInfo` (reason, domain
//! `a2a-protocol.org`, metadata) for every A2A error and a `BadRequest` for invalid parameters.
//!
//! ```
//! use a2a_runtime::A2aError;
//! use a2a_runtime::grpc::status::{from_status, to_status};
//!
//! let status = to_status(&A2aError::TaskNotFound { task_id: "t-1".into() });
//! assert_eq!(status.code(), tonic::Code::NotFound);
//! assert_eq!(from_status(&status), A2aError::TaskNotFound { task_id: "t-1".into() });
//! ```

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use tonic::Code;
use tonic_types::{ErrorDetails, StatusExt as _};

use crate::error::{A2aError, BAD_REQUEST_TYPE, ERROR_DOMAIN, ERROR_INFO_TYPE};

/// The gRPC code of a status name of the error table (`NOT_FOUND` → [`Code::NotFound`]).
pub fn code_of(name: &str) -> Code {
    match name {
        "CANCELLED" => Code::Cancelled,
        "INVALID_ARGUMENT" => Code::InvalidArgument,
        "DEADLINE_EXCEEDED" => Code::DeadlineExceeded,
        "NOT_FOUND" => Code::NotFound,
        "ALREADY_EXISTS" => Code::AlreadyExists,
        "PERMISSION_DENIED" => Code::PermissionDenied,
        "RESOURCE_EXHAUSTED" => Code::ResourceExhausted,
        "FAILED_PRECONDITION" => Code::FailedPrecondition,
        "ABORTED" => Code::Aborted,
        "OUT_OF_RANGE" => Code::OutOfRange,
        "UNIMPLEMENTED" => Code::Unimplemented,
        "UNAVAILABLE" => Code::Unavailable,
        "DATA_LOSS" => Code::DataLoss,
        "UNAUTHENTICATED" => Code::Unauthenticated,
        "OK" => Code::Ok,
        "UNKNOWN" => Code::Unknown,
        _ => Code::Internal,
    }
}

/// The gRPC status of `error`, with its details.
pub fn to_status(error: &A2aError) -> tonic::Status {
    let mut details = ErrorDetails::new();
    if let Some(reason) = error.reason() {
        let metadata: HashMap<String, String> = error
            .info_metadata()
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect();
        details.set_error_info(reason, ERROR_DOMAIN, metadata);
    }
    if let A2aError::QuotaExceeded {
        retry_after_secs, ..
    } = error
    {
        details.set_retry_info(Some(std::time::Duration::from_secs(*retry_after_secs)));
    }
    if let A2aError::InvalidParams { violations } = error {
        for v in violations {
            details.add_bad_request_violation(v.field.clone(), v.description.clone());
        }
    }
    if let A2aError::InternalLogged { correlation_id, .. } = error {
        details.set_request_info(correlation_id.clone(), "");
    }
    tonic::Status::with_error_details(code_of(error.grpc_status()), error.to_string(), details)
}

/// The A2A error a gRPC status stands for: by `ErrorInfo.reason` when the details carry one,
/// otherwise by the status code (an unknown failure is [`A2aError::Internal`]).
pub fn from_status(status: &tonic::Status) -> A2aError {
    let details = status.get_error_details();
    let mut wire = Vec::with_capacity(2);
    if let Some(info) = details.error_info() {
        let metadata: Map<String, Value> = info
            .metadata
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        wire.push(json!({
            "@type": ERROR_INFO_TYPE,
            "reason": info.reason,
            "domain": info.domain,
            "metadata": metadata,
        }));
    }
    if let Some(bad) = details.bad_request() {
        let violations: Vec<Value> = bad
            .field_violations
            .iter()
            .map(|v| json!({"field": v.field, "description": v.description}))
            .collect();
        wire.push(json!({"@type": BAD_REQUEST_TYPE, "fieldViolations": violations}));
    }
    let code = match status.code() {
        Code::InvalidArgument => -32602,
        Code::Unimplemented => -32601,
        Code::NotFound => -32001,
        _ => -32603,
    };
    let message = strip_prefix(status.message());
    A2aError::from_wire(code, message, &wire)
}

/// The message of an error as the server wrote it, without the prefix its `Display` adds
/// (`Unsupported operation: …` → `…`), so that a status read back displays as sent.
fn strip_prefix(message: &str) -> &str {
    const PREFIXES: &[&str] = &[
        "Unsupported operation: ",
        "Content type not supported: ",
        "Invalid agent response: ",
        "Invalid JSON payload: ",
        "Request payload validation error: ",
        "Internal error: ",
    ];
    PREFIXES
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .unwrap_or(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::FieldViolation;

    #[test]
    fn every_error_survives_the_status_round_trip_with_its_code() {
        let errors = vec![
            A2aError::TaskNotFound {
                task_id: "t".into(),
            },
            A2aError::TaskNotCancelable {
                task_id: "t".into(),
                state: "TASK_STATE_COMPLETED".into(),
            },
            A2aError::PushNotificationNotSupported,
            A2aError::UnsupportedOperation("terminal".into()),
            A2aError::ContentTypeNotSupported("image/x".into()),
            A2aError::InvalidAgentResponse("bad".into()),
            A2aError::ExtendedAgentCardNotConfigured,
            A2aError::ExtensionSupportRequired {
                uris: vec!["https://a/v1".into(), "https://b/v1".into()],
            },
            A2aError::VersionNotSupported {
                requested: "0.3".into(),
                supported: vec!["1.0".into()],
            },
            A2aError::InvalidParams {
                violations: vec![FieldViolation::new("message.parts", "is required")],
            },
            A2aError::Internal("boom".into()),
        ];
        for e in errors {
            let status = to_status(&e);
            assert_eq!(status.code(), code_of(e.grpc_status()), "{e}");
            assert_eq!(status.message(), e.to_string());
            let details = status.get_error_details();
            match (e.reason(), details.error_info()) {
                (Some(reason), Some(info)) => {
                    assert_eq!(info.reason, reason);
                    assert_eq!(info.domain, ERROR_DOMAIN);
                }
                (None, None) => {}
                other => panic!("{e}: {other:?}"),
            }
            assert_eq!(from_status(&status), e);
        }
    }

    #[test]
    fn a_status_without_details_maps_by_code() {
        let s = tonic::Status::new(Code::Unavailable, "down");
        assert_eq!(from_status(&s), A2aError::Internal("down".into()));
        let s = tonic::Status::new(Code::InvalidArgument, "bad");
        assert!(matches!(from_status(&s), A2aError::InvalidParams { .. }));
    }
}
